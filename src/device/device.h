#pragma once
// One GPU as Strata sees it after every listing has been read and merged: identity (PCI bus id,
// UUID, runtime ordinal), what it is (vendor, name, arch, discrete or integrated), its memory,
// live statistics when a source reports them, and whether this build can run on it and why not.
//
// Each source (CUDA, NVML, HIP, KFD topology, DRM, PCI, hipInfo, Windows registry) produces
// GpuDevice records with the fields it knows; merge_devices() (device/merge.h) folds the records
// of one card together by PCI bus id, and classify_devices() fills `usable` and `reasons`.
//
//   for (const GpuDevice& d : devices)
//       fmt::print("{} {} {}\n", d.pci ? d.pci->to_string() : "-", d.arch, d.name);

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/pci_address.h"

namespace strata {

enum class GpuVendor { unknown, nvidia, amd };
enum class GpuKind { unknown, discrete, integrated };

inline constexpr uint16_t kPciVendorNvidia = 0x10de;
inline constexpr uint16_t kPciVendorAmd = 0x1002;

const char* vendor_name(GpuVendor v);     // "NVIDIA", "AMD", "unknown"
const char* kind_name(GpuKind k);         // "discrete", "integrated", "unknown"
const char* backend_name(GpuVendor v);    // "cuda", "hip", ""

// Live statistics; each is absent when no source reports it.
struct GpuStats {
    std::optional<uint64_t> vram_used_bytes;
    std::optional<double> utilization_percent;
    std::optional<double> temperature_c;
    std::optional<double> power_w;
    std::optional<double> clock_mhz;  // graphics (AMD sclk) / SM (NVIDIA) clock now
    std::optional<int> pcie_generation;
    std::optional<int> pcie_width;
};

struct GpuDevice {
    GpuVendor vendor = GpuVendor::unknown;
    std::string name;
    std::string arch;       // "sm_90", "gfx1201" (feature flags stripped)
    int wave_size = 0;      // 0 when unknown
    int compute_units = 0;  // SMs on NVIDIA, CUs on AMD; 0 when unknown
    uint64_t vram_total_bytes = 0;
    GpuStats stats;
    std::optional<PciAddress> pci;
    uint16_t pci_device_id = 0;
    std::string uuid;           // "GPU-..." on NVIDIA; empty when unknown
    std::string kernel_driver;  // "amdgpu", "nvidia", "nouveau", ... from sysfs
    GpuKind kind = GpuKind::unknown;

    // The ordinal the vendor runtime (CUDA or HIP) gives this device in this process, after the
    // visibility variables. `ordinal_predicted` marks an ordinal derived from the KFD node order
    // (how HIP numbers devices) because no HIP runtime was there to ask.
    std::optional<int> runtime_ordinal;
    bool ordinal_predicted = false;
    // Hidden by a visibility variable the user set (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES...).
    std::string hidden_by;

    // A compute driver answered for this device (CUDA driver, NVML, KFD node, HIP, hipInfo).
    // Cards seen only on the PCI bus, by DRM or in the registry lack one.
    bool has_compute_driver = false;

    std::vector<std::string> sources;  // "cuda", "nvml", "kfd", "drm", "pci", "hip", ...

    // Filled by classify_devices().
    bool usable = false;
    std::vector<std::string> reasons;  // why not usable; empty when usable
};

// The visibility variables as the user set them, read once at the edge (cli) and passed in.
struct VisibilityVariables {
    std::optional<std::string> cuda_visible_devices;
    std::optional<std::string> hip_visible_devices;
    std::optional<std::string> rocr_visible_devices;
    // The one of them Strata set for itself (device/self_visibility.h), not the user: it still
    // filters the listing, but is explained as Strata's choice.
    std::optional<std::string> set_by_strata = std::nullopt;
};

}  // namespace strata
