#pragma once
// The /metrics rows about the hardware `strata serve` runs on, appended to the server's own:
// the expert tiers' hit rate and lanes (when the model's experts do not all fit in VRAM) and live
// GPU statistics (memory, utilisation, temperature, power) from NVML or amdgpu's sysfs files.
//
//   auto extra = hardware_metrics(&engine->placement, on_gpu);   // the engine outlives the server
//   ctx.metrics.set_extra(extra);                 // rendered on every scrape

#include <functional>
#include <string>

#include "runtime/gpu_placement.h"

namespace strata::cli {

// `placement` (null: none) must outlive the returned function's calls.
std::function<std::string()> hardware_metrics(const GpuPlacement* placement, bool sample_gpus);

}  // namespace strata::cli
