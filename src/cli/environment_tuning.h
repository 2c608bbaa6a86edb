#pragma once
// The one place that reads Strata's STRATA_* environment switches: the A/B alternatives that the
// benchmarks compare (CPU kernels, GPU kernels, expert tiers) and the timing studies. They are
// read once, at the command line's edge, into typed settings (backend/cpu/cpu_tuning.h,
// backend/gpu/gpu_tuning.h, experts/tier_tuning.h) that travel with the load request; nothing
// below the command line reads the environment. README's "For A/B measurements" paragraph lists
// what each variable does.
//
//   ComputeOptions o;  apply_environment_tuning(o);        // DeviceFlags::options() does this
//   request.tier_tuning = environment_tuning().tiers;

#include "backend/cpu/cpu_tuning.h"
#include "backend/gpu/gpu_tuning.h"
#include "experts/tier_tuning.h"
#include "model/gpu/gpu_model.h"

namespace strata::cli {

struct EnvironmentTuning {
    CpuTuning cpu;
    gpu::GpuTuning gpu;
    TierTuning tiers;
    bool cpu_profile = false;  // STRATA_CPU_PROFILE=1: as `strata bench --cpu-profile`
    bool gpu_profile = false;  // STRATA_GPU_PROFILE=1: as `strata bench --gpu-profile`
};

// This process's switches, read on the first call. A timing study (STRATA_GPU_ABLATE,
// STRATA_GPU_EXTRA_LAUNCHES) is announced on stderr then, since every GPU output is wrong under it.
const EnvironmentTuning& environment_tuning();

// The CPU and GPU switches into a load request, and the profiling switches turned on.
void apply_environment_tuning(ComputeOptions& options);

}  // namespace strata::cli
