#pragma once
// Fake Linux sysfs trees in the kernel's formats (KFD topology properties, amdgpu DRM files,
// PCI device folders, pci.ids), written by hand from the kernel documentation and
// drivers/gpu/drm/amd/amdkfd/kfd_topology.c, for the device-layer tests.
//
//   FakeSysfs fs(dir.root());
//   fs.add_cpu_node(0);
//   fs.add_amd_gpu({.kfd_node = 1, .gfx_target_version = 120001, .pci = "0000:03:00.0", ...});

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "device/pci_address.h"

namespace strata::test {

struct FakeAmdGpu {
    int kfd_node = -1;  // -1: amdgpu exposes no KFD node for it
    uint32_t gfx_target_version = 0;
    std::string pci;    // "0000:03:00.0"
    uint16_t device_id = 0;
    uint64_t vram_bytes = 0;
    uint64_t vram_used_bytes = 0;
    int simd_count = 128;  // 2 SIMDs per CU on RDNA, 4 on GCN
    int simd_per_cu = 2;
    int wave_front_size = 32;
    int drm_card = -1;     // -1: no DRM card folder
    uint64_t unique_id = 0;
    std::string driver = "amdgpu";  // "" = no driver bound
};

class FakeSysfs {
public:
    explicit FakeSysfs(std::string root) : root_(std::move(root)) {}

    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::path p = std::filesystem::path(root_) / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
    }

    // A CPU node: simd_count 0, no gfx target.
    void add_cpu_node(int node, int cores = 16) const {
        write(node_dir(node) + "/properties",
              "cpu_cores_count " + std::to_string(cores) +
                  "\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count 1\np2p_links_count 0\n"
                  "cpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\n"
                  "num_gws 0\nwave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\n"
                  "simd_per_cu 0\nmax_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\n"
                  "location_id 0\ndomain 0\ndrm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\n"
                  "max_engine_clk_ccompute 4850\n");
        write(node_dir(node) + "/mem_banks/0/properties", "heap_type 0\nsize_in_bytes 67108864000\nflags 0\nwidth 64\nmem_clk_max 2400\n");
        write(node_dir(node) + "/gpu_id", "0\n");
    }

    void add_amd_gpu(const FakeAmdGpu& g) const {
        auto pci = PciAddress::parse(g.pci);
        ASSERT_TRUE(pci.has_value()) << g.pci;
        uint32_t location_id = pci->bus << 8 | pci->device << 3 | pci->function;
        if (g.kfd_node >= 0) {
            write(node_dir(g.kfd_node) + "/properties",
                  "cpu_cores_count 0\nsimd_count " + std::to_string(g.simd_count) +
                      "\nmem_banks_count 1\ncaches_count 206\nio_links_count 1\np2p_links_count 0\ncpu_core_id_base 0\n"
                      "simd_id_base 2147487744\nmax_waves_per_simd 16\nlds_size_in_kb 64\ngds_size_in_kb 0\nnum_gws 64\n"
                      "wave_front_size " + std::to_string(g.wave_front_size) +
                      "\narray_count 8\nsimd_arrays_per_engine 2\ncu_per_simd_array 8\nsimd_per_cu " + std::to_string(g.simd_per_cu) +
                      "\nmax_slots_scratch_cu 32\ngfx_target_version " + std::to_string(g.gfx_target_version) +
                      "\nvendor_id 4098\ndevice_id " + std::to_string(g.device_id) + "\nlocation_id " + std::to_string(location_id) +
                      "\ndomain " + std::to_string(pci->domain) + "\ndrm_render_minor " + std::to_string(128 + std::max(g.drm_card, 0)) +
                      "\nhive_id 0\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 0\nnum_cp_queues 8\nmax_engine_clk_fcompute 2970\n"
                      "local_mem_size 0\nfw_version 2420\ncapability 671588992\nunique_id " + std::to_string(g.unique_id) +
                      "\nnum_xcc 1\nmax_engine_clk_ccompute 4851\n");
            write(node_dir(g.kfd_node) + "/mem_banks/0/properties",
                  "heap_type 1\nsize_in_bytes " + std::to_string(g.vram_bytes) + "\nflags 0\nwidth 256\nmem_clk_max 1258\n");
            write(node_dir(g.kfd_node) + "/gpu_id", std::to_string(40000 + g.kfd_node) + "\n");
        }
        add_pci_function(g.pci, 0x1002, g.device_id, 0x030000, g.driver);
        if (g.drm_card >= 0) {
            std::string card = "sys/class/drm/card" + std::to_string(g.drm_card);
            std::string dev = card + "/device/";
            write(dev + "vendor", "0x1002\n");
            write(dev + "device", hex4(g.device_id) + "\n");
            write(dev + "uevent", "DRIVER=" + g.driver + "\nPCI_CLASS=30000\nPCI_ID=1002:" + upper_hex(g.device_id) +
                                      "\nPCI_SUBSYS_ID=1002:0E3B\nPCI_SLOT_NAME=" + g.pci + "\nMODALIAS=pci:v00001002d0000" +
                                      upper_hex(g.device_id) + "sv00001002sd00000E3Bbc03sc00i00\n");
            write(dev + "mem_info_vram_total", std::to_string(g.vram_bytes) + "\n");
            write(dev + "mem_info_vram_used", std::to_string(g.vram_used_bytes) + "\n");
            write(dev + "gpu_busy_percent", "3\n");
            write(dev + "current_link_speed", "16.0 GT/s PCIe\n");
            write(dev + "current_link_width", "16\n");
            write(dev + "hwmon/hwmon" + std::to_string(g.drm_card + 2) + "/temp1_input", "45000\n");
            write(dev + "hwmon/hwmon" + std::to_string(g.drm_card + 2) + "/power1_average", "25000000\n");
            write(dev + "hwmon/hwmon" + std::to_string(g.drm_card + 2) + "/freq1_input", "2520000000\n");
            // Connector folders sit beside the cards and must not be read as cards.
            write(card + "-DP-1/status", "disconnected\n");
        }
    }

    void add_pci_function(const std::string& pci, uint16_t vendor, uint16_t device, uint32_t class_code, const std::string& driver) const {
        std::string dir = "sys/bus/pci/devices/" + pci + "/";
        write(dir + "vendor", hex4(vendor) + "\n");
        write(dir + "device", hex4(device) + "\n");
        char cls[16];
        std::snprintf(cls, sizeof(cls), "0x%06x", class_code);
        write(dir + "class", std::string(cls) + "\n");
        if (!driver.empty()) {
            std::filesystem::path target = std::filesystem::path(root_) / "sys/bus/pci/drivers" / driver;
            std::filesystem::create_directories(target);
            std::filesystem::create_directory_symlink(target, std::filesystem::path(root_) / dir / "driver");
        }
    }

    // The slice of pci.ids the fixtures need, in the database's format.
    void add_pci_ids() const {
        write("usr/share/hwdata/pci.ids",
              "#\tList of PCI ID's\n#\n0f00  Some Other Vendor\n\t7550  Not This One\n"
              "1002  Advanced Micro Devices, Inc. [AMD/ATI]\n"
              "\t1586  Strix Halo [Radeon Graphics / Radeon 8050S / Radeon 8060S]\n"
              "\t164e  Raphael\n"
              "\t66a1  Vega 20 [Radeon Pro VII/Radeon Instinct MI50 32GB]\n"
              "\t744c  Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]\n"
              "\t\t1002 0e3b  Radeon RX 7900 XTX\n"
              "\t7550  Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]\n"
              "10de  NVIDIA Corporation\n\t2204  GA102 [GeForce RTX 3090]\n");
    }

private:
    static std::string node_dir(int node) { return "sys/class/kfd/kfd/topology/nodes/" + std::to_string(node); }
    static std::string hex4(uint16_t v) {
        char b[8];
        std::snprintf(b, sizeof(b), "0x%04x", v);
        return b;
    }
    static std::string upper_hex(uint16_t v) {
        char b[8];
        std::snprintf(b, sizeof(b), "%04X", v);
        return b;
    }
    std::string root_;
};

// The machines of issue 7, built on demand.
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// Ryzen 7000 desktop: the Raphael iGPU (gfx1036, 512 MiB carve-out) is KFD node 1 — so HIP's
// ordinal 0 — while the RX 9070 XT (gfx1201) sits at node 2 on a lower bus number.
inline void write_desktop_igpu_and_9070xt(const FakeSysfs& fs) {
    fs.add_cpu_node(0);
    fs.add_amd_gpu({.kfd_node = 1, .gfx_target_version = 100306, .pci = "0000:0e:00.0", .device_id = 0x164e,
                    .vram_bytes = 512ull << 20, .vram_used_bytes = 100ull << 20, .simd_count = 4, .drm_card = 0, .unique_id = 0x1111});
    fs.add_amd_gpu({.kfd_node = 2, .gfx_target_version = 120001, .pci = "0000:03:00.0", .device_id = 0x7550,
                    .vram_bytes = 16304 * (1ull << 20), .vram_used_bytes = 700ull << 20, .simd_count = 128, .drm_card = 1,
                    .unique_id = 0x2222});
    fs.add_pci_ids();
}

}  // namespace strata::test
