#pragma once
// Where the command line's flags become an EngineRequest (runtime/engine.h): --device/--gpus
// (DeviceFlags, with the STRATA_* tuning read at the edge), the memory plan's and the tiers' flags
// (TierFlags), the context and batch the plan reserves for. Every command that runs a model
// opens it through here.
//
//   auto req = engine_request(o.model, o.device, o.tiers, o.n_ctx, o.n_batch);
//   if (!req) return report_failure("run", req.status().message());
//   auto engine = Engine::open(std::move(*req));

#include <string>

#include "cli/device_flags.h"
#include "cli/tier_flags.h"
#include "core/thread_pool.h"
#include "runtime/engine.h"

namespace strata::cli {

inline Result<EngineRequest> engine_request(const std::string& path, const DeviceFlags& device, const TierFlags& tiers,
                                            int64_t n_ctx, int64_t n_batch) {
    EngineRequest req{.model_path = path};
    STRATA_ASSIGN_OR_RETURN(req.compute, device.options());
    STRATA_ASSIGN_OR_RETURN(req.placement, tiers.request(req.compute, n_ctx, n_batch));
    return req;
}

// The CPU pool's threads when -t is not given (0: one per hardware thread). When expert tiers
// give the CPU a lane beside a GPU, one hardware thread is left to the thread that plans each
// layer and drives the GPU: with all 16 in the pool it competes with them, and the next lane
// starts later. On the H200's 16-core host, every expert in RAM, tg128 went from 81.8 / 83.1 /
// 81.8 tok/s with 16 threads to 85.5 / 83.3 / 84.8 with 15 (alternated rounds;
// bench/results/2026-11-30-cache-warming/). Fewer than 8 hardware threads keep them all: there
// each is a large share of the CPU lane.
inline int cpu_pool_threads(int requested, const GpuPlacement& placement) {
    if (requested > 0) return requested;
    const int hardware = ThreadPool::hardware_threads();
    return placement.tiered && hardware >= ThreadPool::kAutoSpinMinThreads ? hardware - 1 : 0;
}

}  // namespace strata::cli
