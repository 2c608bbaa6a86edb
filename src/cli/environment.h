#pragma once
// The one place that reads the process environment, at the command line's edge; nothing below
// the command line does. Two kinds of variables:
// - Strata's STRATA_* switches: the A/B alternatives that the benchmarks compare (CPU kernels, GPU
//   kernels, expert tiers) and the timing studies, read into typed settings
//   (backend/cpu/cpu_tuning.h, backend/gpu/gpu_tuning.h, experts/tier_tuning.h) that travel with
//   the load request. README's "For A/B measurements" paragraph lists what each one does.
// - What the GPU runtimes will read themselves (CUDA_VISIBLE_DEVICES and its HIP twins, HIP_PATH)
//   and the marker of Strata's own re-run, which device selection (device/) is given.
//
//   ComputeOptions o;  apply_environment_tuning(o);        // DeviceFlags::options() does this
//   request.tier_tuning = environment_tuning().tiers;
//   list_this_machine(device_environment().visibility, device_environment().hip_sdk);

#include <optional>
#include <string>

#include "backend/cpu/cpu_tuning.h"
#include "backend/gpu/gpu_tuning.h"
#include "device/hip_sdk.h"
#include "device/self_visibility.h"
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

struct DeviceEnvironment {
    // CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES as the user set them (which
    // one Strata set for itself, when this run is its re-run).
    VisibilityVariables visibility;
    HipSdkEnvironment hip_sdk;  // HIP_PATH, HIP_PATH_NN, ProgramFiles: where the HIP SDK may lie on Windows
    std::optional<SelfVisibility> self_rerun;  // this run is Strata's re-run for its chosen card(s)
    bool self_visibility_disabled = false;     // STRATA_NO_SELF_VISIBILITY=1: keep every card visible
};

// This process's, read on the first call (a re-run is a new process and reads its own).
const DeviceEnvironment& device_environment();

}  // namespace strata::cli
