#pragma once
// Linux GPU discovery from files alone, before any GPU runtime is loaded: the AMD KFD topology
// (/sys/class/kfd/kfd/topology/nodes), DRM cards (/sys/class/drm/card*/device), display-class
// PCI functions (/sys/bus/pci/devices) and the pci.ids name database. Every reader takes a root
// folder ("/" on a real machine) so tests run them on fake trees in the kernel's file formats.
//
//   auto nodes = read_kfd_gpu_nodes("/");                 // GPU nodes in KFD order
//   auto devices = list_sysfs_devices("/", visibility);   // records for merge_devices()

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"

namespace strata {

// One GPU node of the KFD topology (CPU nodes, simd_count 0, are skipped).
struct KfdGpuNode {
    int node_id = 0;
    std::string arch;              // from gfx_target_version; "" when the kernel omits it
    uint32_t gfx_target_version = 0;
    int simd_count = 0;
    int simds_per_cu = 0;
    int wave_front_size = 0;
    int cpu_cores_count = 0;       // > 0 on old kernels' combined APU nodes
    uint16_t vendor_id = 0, device_id = 0;
    uint64_t unique_id = 0;        // ROCr prints it as the UUID "GPU-<16 hex digits>"
    int drm_render_minor = -1;
    PciAddress pci;                // from domain and location_id
    uint64_t local_memory_bytes = 0;  // sum of the frame-buffer mem_banks (heap types 1 and 2)
};

struct DrmCard {
    std::string card;  // "card1"
    std::optional<PciAddress> pci;
    uint16_t vendor_id = 0, device_id = 0;
    std::string driver;
    std::string product_name;  // amdgpu's product_name (boards with a FRU only)
    std::optional<uint64_t> vram_total_bytes;
    GpuStats stats;
};

struct PciDisplayFunction {
    PciAddress pci;
    uint16_t vendor_id = 0, device_id = 0;
    uint32_t class_code = 0;  // 0x030000 VGA, 0x030200 3D controller, 0x038000 display
    std::string driver;       // "" when no driver is bound
};

std::vector<KfdGpuNode> read_kfd_gpu_nodes(const std::string& root);
std::vector<DrmCard> read_drm_cards(const std::string& root);
// NVIDIA and AMD display-class functions only: BMC VGA chips and other vendors are not for us.
std::vector<PciDisplayFunction> read_pci_display_functions(const std::string& root);
// The device's name from pci.ids (root/usr/share/hwdata or root/usr/share/misc); "" if absent.
std::string lookup_pci_ids_name(const std::string& root, uint16_t vendor_id, uint16_t device_id);

// Parses a visibility list ("1,0", "GPU-abc..") the way the runtimes do: entries up to the first
// one that names no device. `ids[i]` are the UUID-like names of device i (may be empty).
// Returns the original indices, in the order the runtime will number them.
std::vector<int> apply_visibility_list(const std::string& list, const std::vector<std::string>& ids);

// Reads all of the above under `root` and returns one record per source and device, AMD KFD
// nodes carrying the ordinal HIP will give them (KFD order after ROCR_VISIBLE_DEVICES, then
// HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES), marked as predicted.
std::vector<GpuDevice> list_sysfs_devices(const std::string& root, const VisibilityVariables& visibility);

}  // namespace strata
