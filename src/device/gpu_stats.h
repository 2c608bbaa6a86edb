#pragma once
// Live GPU statistics — memory used and total, utilisation, temperature, power, clock, PCIe link —
// for a metrics endpoint that samples them on every scrape: NVML on NVIDIA (loaded at run time,
// initialised once per reader), amdgpu's sysfs and hwmon files on AMD (no ROCm needed). A field
// no source reports stays empty; sampling never fails, a missing source just adds no rows.
//
//   GpuStatsReader reader;                               // once, at server start
//   for (const GpuStatsSample& s : reader.sample()) {    // per scrape; safe from any thread
//       if (s.stats.vram_used_bytes) emit("strata_gpu_vram_used_bytes", s.pci_text(), *s.stats.vram_used_bytes);
//   }

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"

namespace strata {

struct GpuStatsSample {
    GpuVendor vendor = GpuVendor::unknown;
    std::optional<PciAddress> pci;  // the key to join with the device listing (never a position)
    std::string name;               // NVML's name, amdgpu's product_name; "" when neither says
    uint64_t vram_total_bytes = 0;  // 0 when unknown
    GpuStats stats;
    std::string source;             // "nvml" or "amdgpu"

    std::string pci_text() const { return pci ? pci->to_string() : "unknown"; }
};

// Every amdgpu card under root/sys/class/drm, in card order. Files read: mem_info_vram_total,
// mem_info_vram_used, gpu_busy_percent, hwmon*/temp1_input (m°C), power1_average or
// power1_input (µW), freq1_input (Hz), current_link_speed and current_link_width.
std::vector<GpuStatsSample> read_amdgpu_sysfs_stats(const std::string& root);

class GpuStatsReader {
public:
    struct Options {
        std::string sysfs_root = "/";
        bool use_nvml = true;  // false in tests: only the files under sysfs_root count
    };
    GpuStatsReader();
    explicit GpuStatsReader(Options options);
    ~GpuStatsReader();
    GpuStatsReader(const GpuStatsReader&) = delete;
    GpuStatsReader& operator=(const GpuStatsReader&) = delete;

    // NVIDIA cards (NVML order) then AMD cards. Reads only after construction, so concurrent
    // calls are safe (NVML is thread-safe; the sysfs files are read afresh each time).
    std::vector<GpuStatsSample> sample() const;

    // "NVML 550.54.15: ready", "NVML: not found (...)", "NVML: not used": for a log line.
    const std::string& nvml_status() const { return nvml_status_; }

    struct Nvml;  // the loaded library and its entry points (gpu_stats_nvml.cpp)

private:
    std::vector<GpuStatsSample> sample_nvml() const;  // empty without NVML

    Options options_;
    std::unique_ptr<Nvml> nvml_;
    std::string nvml_status_;
};

}  // namespace strata
