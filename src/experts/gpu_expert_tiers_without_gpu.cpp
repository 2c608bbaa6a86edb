// Builds without a GPU backend have no expert tiers beside a GPU (experts/gpu_expert_tiers.h);
// the CPU engine reads every expert from RAM or the mapped file itself.
#include <fmt/format.h>

#include "experts/gpu_expert_tiers.h"

namespace strata {

std::string GpuExpertTierSummary::describe() const { return "expert tiers: none (no GPU support in this build)"; }

Result<std::unique_ptr<gpu::RoutedExperts>> make_gpu_expert_tiers(const GgufFile&, gpu::GpuContext&,
                                                                  const GpuExpertTierOptions&, GpuExpertTierSummary*) {
    return Status::error("expert tiers need a GPU build (configure with nvcc or -DSTRATA_HIP=ON)");
}

}  // namespace strata
