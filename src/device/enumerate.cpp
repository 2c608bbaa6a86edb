#include "device/enumerate.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "device/gpu_arch.h"
#include "device/self_visibility.h"

#include "device/sysfs_linux.h"
#include "device/windows_amd.h"

// Set by src/CMakeLists.txt from the STRATA_GPU_ARCHS cache variable; empty without a GPU backend.
#ifndef STRATA_COMPILED_GPU_ARCHS
#define STRATA_COMPILED_GPU_ARCHS ""
#endif

namespace strata {

const char* vendor_name(GpuVendor v) {
    switch (v) {
        case GpuVendor::nvidia: return "NVIDIA";
        case GpuVendor::amd: return "AMD";
        default: return "unknown";
    }
}

const char* kind_name(GpuKind k) {
    switch (k) {
        case GpuKind::discrete: return "discrete";
        case GpuKind::integrated: return "integrated";
        default: return "unknown";
    }
}

const char* backend_name(GpuVendor v) {
    switch (v) {
        case GpuVendor::nvidia: return "cuda";
        case GpuVendor::amd: return "hip";
        default: return "";
    }
}

std::string compiled_gpu_archs_text() { return STRATA_COMPILED_GPU_ARCHS; }
ArchSet compiled_gpu_archs() { return ArchSet::parse(STRATA_COMPILED_GPU_ARCHS); }

DeviceListing enumerate_devices(const EnumerateOptions& options) {
    DeviceListing listing;
    // Precedence order for merge_devices(): the runtimes know names and ordinals best, then the
    // kernel's own listings, then names from the PCI database.
    std::vector<GpuDevice> records;
    bool cuda_answered = false;
    if (options.probe_runtimes) {
        const std::optional<HipSdkSearch> hip_sdks = find_hip_sdks_on_this_machine(options.hip_sdk);
        const std::vector<HipSdk> sdks = hip_sdks ? hip_sdks->sdks : std::vector<HipSdk>{};
        for (RuntimeListing& r : std::vector<RuntimeListing>{probe_cuda(), probe_hip(sdks), probe_nvml()}) {
            if (r.report.name == "CUDA driver") cuda_answered = r.report.loaded;
            listing.runtimes.push_back(r.report);
            records.insert(records.end(), r.devices.begin(), r.devices.end());
        }
        if (hip_sdks) listing.runtimes.push_back(hip_sdk_report(*hip_sdks));
        auto windows = read_windows_amd_devices(sdks);
        records.insert(records.end(), windows.begin(), windows.end());
    }
    auto sysfs = list_sysfs_devices(options.sysfs_root, options.visibility);
    records.insert(records.end(), sysfs.begin(), sysfs.end());

    listing.devices = merge_devices(records);
    // NVML sees every NVIDIA card; CUDA only those CUDA_VISIBLE_DEVICES leaves. A card CUDA
    // answered without is hidden by the user's variable, and the listing says so.
    for (GpuDevice& d : listing.devices) {
        if (d.vendor == GpuVendor::nvidia && cuda_answered && !d.runtime_ordinal && d.hidden_by.empty() &&
            options.visibility.cuda_visible_devices) {
            d.hidden_by = "CUDA_VISIBLE_DEVICES=" + *options.visibility.cuda_visible_devices;
        }
    }
    // KFD alone gives no name (no pci.ids, no runtime): the arch and family still tell the card.
    for (GpuDevice& d : listing.devices) {
        if (!d.name.empty() || d.arch.empty()) continue;
        const AmdArchInfo* info = find_amd_arch(d.arch);
        d.name = fmt::format("{} {}{}", vendor_name(d.vendor), d.arch, info ? fmt::format(" ({})", info->family) : "");
    }
    classify_devices(listing.devices, options.classify);
    return listing;
}

}  // namespace strata
