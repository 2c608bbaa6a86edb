#pragma once
// Where the command line's flags become an EngineRequest (runtime/engine.h): --device/--gpus
// (DeviceFlags, with the STRATA_* tuning read at the edge), the memory plan's and the tiers' flags
// (TierFlags), the context and batch the plan reserves for. Every command that runs a model
// opens it through here.
//
//   auto req = engine_request(o.model, o.device, o.tiers, o.n_ctx, o.n_batch);
//   if (!req) return report_failure("run", req.status().message());
//   auto engine = Engine::open(std::move(*req));

#include <fmt/format.h>

#include <map>
#include <string>

#include "cli/device_flags.h"
#include "cli/tier_flags.h"
#include "core/thread_pool.h"
#include "core/threads_auto.h"
#include "runtime/engine.h"

namespace strata::cli {

inline Result<EngineRequest> engine_request(const std::string& path, const DeviceFlags& device, const TierFlags& tiers,
                                            int64_t n_ctx, int64_t n_batch) {
    EngineRequest req{.model_path = path};
    STRATA_ASSIGN_OR_RETURN(req.compute, device.options());
    STRATA_ASSIGN_OR_RETURN(req.placement, tiers.request(req.compute, n_ctx, n_batch));
    return req;
}

// -t/--threads: a count, 0 for one per hardware thread, or auto (the default): one per CPU that
// other programs leave free (core/threads_auto.h), said on stderr when the pool is made.
inline constexpr int kThreadsAuto = -1;
inline void add_threads_option(CLI::App& app, int& threads) {
    threads = kThreadsAuto;
    app.add_option("-t,--threads", threads,
                   "CPU threads: auto (default: one per CPU that other programs leave free, from the affinity mask and "
                   "the CPUs' load over 100 ms), a count, or 0 (one per hardware thread)")
        ->transform(CLI::Transformer(std::map<std::string, int>{{"auto", kThreadsAuto}}))
        ->check(CLI::Range(kThreadsAuto, 1 << 16));
}

// The CPU pool's threads for -t (kThreadsAuto: chosen from the free CPUs; 0: one per hardware
// thread). When expert tiers give the CPU a lane beside a GPU, one thread is left to the thread
// that plans each layer and drives the GPU: with all 16 in the pool it competes with them, and
// the next lane starts later. On the H200's 16-core host, every expert in RAM, tg128 went from
// 81.8 / 83.1 / 81.8 tok/s with 16 threads to 85.5 / 83.3 / 84.8 with 15 (alternated rounds;
// bench/results/2026-11-30-cache-warming/). Fewer than 8 threads keep them all: there each is a
// large share of the CPU lane.
inline int cpu_pool_threads(int requested, const GpuPlacement& placement) {
    if (requested > 0) return requested;
    int threads = ThreadPool::hardware_threads();
    if (requested == kThreadsAuto) {
        const ThreadsChoice choice = choose_threads_auto(*system_cpu_reader());
        fmt::print(stderr, "{}\n", choice.reason);
        threads = choice.threads;
    }
    return placement.tiered && threads >= ThreadPool::kAutoSpinMinThreads ? threads - 1 : threads;
}

}  // namespace strata::cli
