#include "device/merge.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata {
namespace {

template <typename T>
void fill(std::optional<T>& dst, const std::optional<T>& src) {
    if (!dst && src) dst = src;
}

void fill(std::string& dst, const std::string& src) {
    if (dst.empty()) dst = src;
}

void absorb(GpuDevice& d, const GpuDevice& r) {
    if (d.vendor == GpuVendor::unknown) d.vendor = r.vendor;
    fill(d.name, r.name);
    fill(d.arch, r.arch);
    if (d.wave_size == 0) d.wave_size = r.wave_size;
    if (d.compute_units == 0) d.compute_units = r.compute_units;
    if (d.vram_total_bytes == 0) d.vram_total_bytes = r.vram_total_bytes;
    fill(d.stats.vram_used_bytes, r.stats.vram_used_bytes);
    fill(d.stats.utilization_percent, r.stats.utilization_percent);
    fill(d.stats.temperature_c, r.stats.temperature_c);
    fill(d.stats.power_w, r.stats.power_w);
    fill(d.stats.clock_mhz, r.stats.clock_mhz);
    fill(d.stats.pcie_generation, r.stats.pcie_generation);
    fill(d.stats.pcie_width, r.stats.pcie_width);
    fill(d.pci, r.pci);
    if (d.pci_device_id == 0) d.pci_device_id = r.pci_device_id;
    fill(d.uuid, r.uuid);
    fill(d.kernel_driver, r.kernel_driver);
    if (d.kind == GpuKind::unknown) d.kind = r.kind;
    if (!d.runtime_ordinal && r.runtime_ordinal) {
        d.runtime_ordinal = r.runtime_ordinal;
        d.ordinal_predicted = r.ordinal_predicted;
    }
    fill(d.hidden_by, r.hidden_by);
    d.has_compute_driver = d.has_compute_driver || r.has_compute_driver;
    for (const auto& s : r.sources) {
        if (std::find(d.sources.begin(), d.sources.end(), s) == d.sources.end()) d.sources.push_back(s);
    }
}

bool has_any_source(const GpuDevice& d, const std::vector<std::string>& sources) {
    for (const auto& s : sources) {
        if (std::find(d.sources.begin(), d.sources.end(), s) != d.sources.end()) return true;
    }
    return false;
}

std::string missing_driver_reason(const GpuDevice& d) {
    if (d.vendor == GpuVendor::nvidia) {
        if (d.kernel_driver == "nouveau") return "bound to nouveau: CUDA needs NVIDIA's driver (install it and blacklist nouveau)";
        return "no NVIDIA compute driver answered for it (libcuda.so.1 and NVML): install or load the NVIDIA driver";
    }
    if (d.vendor == GpuVendor::amd) {
        if (has_any_source(d, {"registry"})) return "no HIP runtime answered for it: install an AMD driver with HIP support (Adrenalin) or the HIP SDK";
        if (d.kernel_driver.empty()) return "no kernel driver bound to it: load amdgpu";
        if (d.kernel_driver != "amdgpu") return fmt::format("bound to {}, not amdgpu: compute needs amdgpu", d.kernel_driver);
        return "amdgpu exposes no compute (KFD) node for it: check /dev/kfd and the kernel's HSA support";
    }
    return "no compute driver answered for it";
}

}  // namespace

std::string format_gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

std::vector<GpuDevice> merge_devices(const std::vector<GpuDevice>& records) {
    std::vector<GpuDevice> out;
    for (const GpuDevice& r : records) {
        GpuDevice* target = nullptr;
        if (r.pci) {
            for (auto& d : out) {
                if (d.pci && *d.pci == *r.pci) target = &d;
            }
        } else if (!r.arch.empty()) {
            std::vector<GpuDevice*> same_arch;
            for (auto& d : out) {
                if (d.vendor == r.vendor && d.arch == r.arch && !has_any_source(d, r.sources)) same_arch.push_back(&d);
            }
            if (same_arch.size() == 1) target = same_arch[0];
        }
        if (target) absorb(*target, r);
        else out.push_back(r);
    }
    std::stable_sort(out.begin(), out.end(), [](const GpuDevice& a, const GpuDevice& b) {
        if (a.pci.has_value() != b.pci.has_value()) return a.pci.has_value();
        return a.pci && *a.pci < *b.pci;
    });
    return out;
}

void classify_devices(std::vector<GpuDevice>& devices, const ClassifyOptions& options) {
    for (GpuDevice& d : devices) {
        d.reasons.clear();
        if (!d.has_compute_driver) d.reasons.push_back(missing_driver_reason(d));
        if (!d.hidden_by.empty()) d.reasons.push_back(fmt::format("hidden by {} (set by you; unset it to use this GPU)", d.hidden_by));
        if (d.has_compute_driver && d.arch.empty()) {
            d.reasons.push_back("arch unknown: no listing reported it");
        } else if (!d.arch.empty() && !options.archs.contains(d.arch)) {
            // "--for-archs ..." is a question asked, not a build: word the reason for what it is.
            std::string where = options.archs_origin.starts_with("--") ? "in " + options.archs_origin : "compiled into " + options.archs_origin;
            if (options.archs.empty()) d.reasons.push_back(fmt::format("arch {} is not {} (it has no GPU backend)", d.arch, where));
            else d.reasons.push_back(fmt::format("arch {} is not {} ({})", d.arch, where, options.archs.to_string()));
        }
        if (d.vram_total_bytes < options.min_vram_bytes) {
            d.reasons.push_back(d.vram_total_bytes == 0 ? "memory size unknown"
                                                        : fmt::format("too little memory: {} < {} needed", format_gib(d.vram_total_bytes), format_gib(options.min_vram_bytes)));
        }
        d.usable = d.reasons.empty();
    }
}

AutoPick pick_auto_device(const std::vector<GpuDevice>& devices) {
    auto best_of = [&](GpuKind kind) -> std::optional<size_t> {
        std::optional<size_t> best;
        for (size_t i = 0; i < devices.size(); ++i) {
            const GpuDevice& d = devices[i];
            if (!d.usable || d.kind != kind) continue;
            // merge_devices() sorted by bus id, so on equal memory the first (lower bus id) stays.
            if (!best || d.vram_total_bytes > devices[*best].vram_total_bytes) best = i;
        }
        return best;
    };
    AutoPick pick;
    if ((pick.index = best_of(GpuKind::discrete))) {
        pick.why = fmt::format("the usable discrete GPU with the most memory ({})", format_gib(devices[*pick.index].vram_total_bytes));
    } else if ((pick.index = best_of(GpuKind::integrated))) {
        pick.why = fmt::format("no discrete GPU is usable; the integrated GPU with the most memory ({})", format_gib(devices[*pick.index].vram_total_bytes));
    } else if ((pick.index = best_of(GpuKind::unknown))) {
        pick.why = fmt::format("the usable GPU with the most memory ({})", format_gib(devices[*pick.index].vram_total_bytes));
    } else {
        pick.why = devices.empty() ? "no GPU found: running on the CPU" : "no listed GPU is usable by this build: running on the CPU";
    }
    return pick;
}

}  // namespace strata
