#include "device/gpu_stats.h"

#include "device/sysfs_linux.h"

namespace strata {

std::vector<GpuStatsSample> read_amdgpu_sysfs_stats(const std::string& root) {
    std::vector<GpuStatsSample> out;
    // read_drm_cards() parses the identity and the statistics files; only amdgpu fills the
    // statistics (nouveau and nvidia's DRM devices have none of these files).
    for (const DrmCard& card : read_drm_cards(root)) {
        if (card.vendor_id != kPciVendorAmd || card.driver != "amdgpu") continue;
        GpuStatsSample s;
        s.vendor = GpuVendor::amd;
        s.pci = card.pci;
        s.name = card.product_name;
        s.vram_total_bytes = card.vram_total_bytes.value_or(0);
        s.stats = card.stats;
        s.source = "amdgpu";
        out.push_back(std::move(s));
    }
    return out;
}

GpuStatsReader::GpuStatsReader() : GpuStatsReader(Options{}) {}

std::vector<GpuStatsSample> GpuStatsReader::sample() const {
    std::vector<GpuStatsSample> out = sample_nvml();
    auto amd = read_amdgpu_sysfs_stats(options_.sysfs_root);
    out.insert(out.end(), amd.begin(), amd.end());
    return out;
}

}  // namespace strata
