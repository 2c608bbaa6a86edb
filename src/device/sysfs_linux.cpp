#include "device/sysfs_linux.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "device/gpu_arch.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// sysfs files report a size of 4096 whatever they hold, so they are read as streams.
std::optional<std::string> read_small_file(const fs::path& p) {
    std::ifstream in(p);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

std::optional<uint64_t> parse_u64(std::string_view s, int base = 10) {
    if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end == s.data()) return std::nullopt;
    return v;
}

std::optional<uint64_t> read_u64(const fs::path& p, int base = 10) {
    auto s = read_small_file(p);
    return s ? parse_u64(*s, base) : std::nullopt;
}

// KFD "properties" files: one "name value" pair per line.
std::map<std::string, std::string> read_key_values(const fs::path& p) {
    std::map<std::string, std::string> kv;
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string key, value;
        if (ls >> key >> value) kv[key] = value;
    }
    return kv;
}

uint64_t kv_u64(const std::map<std::string, std::string>& kv, const std::string& key) {
    auto it = kv.find(key);
    if (it == kv.end()) return 0;
    return parse_u64(it->second).value_or(0);
}

// Sub-folders of `dir` named <prefix><number>, sorted by number (node 10 after node 9).
std::vector<std::pair<int, fs::path>> numbered_entries(const fs::path& dir, std::string_view prefix) {
    std::vector<std::pair<int, fs::path>> out;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (!name.starts_with(prefix)) continue;
        std::string_view rest = std::string_view(name).substr(prefix.size());
        int n = 0;
        auto [p, err] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
        if (err != std::errc() || p != rest.data() + rest.size()) continue;  // "card0-DP-1"
        out.emplace_back(n, it->path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string driver_of(const fs::path& device_dir) {
    std::error_code ec;
    fs::path target = fs::read_symlink(device_dir / "driver", ec);
    return ec ? "" : target.filename().string();
}

// "16.0 GT/s PCIe" -> generation 4: each generation doubles the transfer rate from 2.5 GT/s.
std::optional<int> pcie_generation_from_speed(std::string_view speed) {
    double gts = 0;
    try {
        gts = std::stod(std::string(speed));
    } catch (...) {
        return std::nullopt;
    }
    int gen = 1;
    for (double rate = 2.5; rate * 1.5 < gts && gen < 7; rate *= 2) ++gen;
    return gts > 0 ? std::optional<int>(gen) : std::nullopt;
}

void read_amdgpu_stats(const fs::path& dev, GpuStats& stats) {
    if (auto v = read_u64(dev / "mem_info_vram_used")) stats.vram_used_bytes = *v;
    if (auto v = read_u64(dev / "gpu_busy_percent")) stats.utilization_percent = static_cast<double>(*v);
    for (const auto& [n, hwmon] : numbered_entries(dev / "hwmon", "hwmon")) {
        if (auto t = read_u64(hwmon / "temp1_input")) stats.temperature_c = static_cast<double>(*t) / 1000.0;
        // power1_average on older kernels, power1_input on newer; both in microwatts.
        auto p = read_u64(hwmon / "power1_average");
        if (!p) p = read_u64(hwmon / "power1_input");
        if (p) stats.power_w = static_cast<double>(*p) / 1e6;
        // freq1_input is the graphics clock (sclk) in Hz; amdgpu has it since Linux 5.x.
        if (auto f = read_u64(hwmon / "freq1_input")) stats.clock_mhz = static_cast<double>(*f) / 1e6;
        break;
    }
    if (auto s = read_small_file(dev / "current_link_speed")) stats.pcie_generation = pcie_generation_from_speed(*s);
    if (auto w = read_u64(dev / "current_link_width")) stats.pcie_width = static_cast<int>(*w);
}

GpuVendor vendor_of(uint16_t pci_vendor) {
    if (pci_vendor == kPciVendorAmd) return GpuVendor::amd;
    if (pci_vendor == kPciVendorNvidia) return GpuVendor::nvidia;
    return GpuVendor::unknown;
}

}  // namespace

std::vector<KfdGpuNode> read_kfd_gpu_nodes(const std::string& root) {
    std::vector<KfdGpuNode> nodes;
    fs::path base = fs::path(root) / "sys/class/kfd/kfd/topology/nodes";
    for (const auto& [id, dir] : numbered_entries(base, "")) {
        auto kv = read_key_values(dir / "properties");
        KfdGpuNode n;
        n.node_id = id;
        n.simd_count = static_cast<int>(kv_u64(kv, "simd_count"));
        if (n.simd_count == 0) continue;  // a CPU node
        n.gfx_target_version = static_cast<uint32_t>(kv_u64(kv, "gfx_target_version"));
        n.arch = gfx_arch_from_kfd_version(n.gfx_target_version);
        n.simds_per_cu = static_cast<int>(kv_u64(kv, "simd_per_cu"));
        n.wave_front_size = static_cast<int>(kv_u64(kv, "wave_front_size"));
        n.cpu_cores_count = static_cast<int>(kv_u64(kv, "cpu_cores_count"));
        n.vendor_id = static_cast<uint16_t>(kv_u64(kv, "vendor_id"));
        n.device_id = static_cast<uint16_t>(kv_u64(kv, "device_id"));
        n.unique_id = kv_u64(kv, "unique_id");
        n.drm_render_minor = kv.count("drm_render_minor") ? static_cast<int>(kv_u64(kv, "drm_render_minor")) : -1;
        n.pci = PciAddress::from_kfd_location(static_cast<uint32_t>(kv_u64(kv, "domain")),
                                              static_cast<uint32_t>(kv_u64(kv, "location_id")));
        for (const auto& [bank_id, bank] : numbered_entries(dir / "mem_banks", "")) {
            auto bank_kv = read_key_values(bank / "properties");
            uint64_t heap = kv_u64(bank_kv, "heap_type");
            if (heap == 1 || heap == 2) n.local_memory_bytes += kv_u64(bank_kv, "size_in_bytes");
        }
        nodes.push_back(std::move(n));
    }
    return nodes;
}

std::vector<DrmCard> read_drm_cards(const std::string& root) {
    std::vector<DrmCard> cards;
    for (const auto& [n, dir] : numbered_entries(fs::path(root) / "sys/class/drm", "card")) {
        fs::path dev = dir / "device";
        DrmCard c;
        c.card = dir.filename().string();
        c.vendor_id = static_cast<uint16_t>(read_u64(dev / "vendor", 16).value_or(0));
        c.device_id = static_cast<uint16_t>(read_u64(dev / "device", 16).value_or(0));
        if (auto uevent = read_small_file(dev / "uevent")) {
            std::istringstream ls(*uevent);
            std::string line;
            while (std::getline(ls, line)) {
                if (line.starts_with("PCI_SLOT_NAME=")) c.pci = PciAddress::parse(line.substr(14));
                if (line.starts_with("DRIVER=")) c.driver = line.substr(7);
            }
        }
        if (c.driver.empty()) c.driver = driver_of(dev);
        c.product_name = read_small_file(dev / "product_name").value_or("");
        if (auto v = read_u64(dev / "mem_info_vram_total")) c.vram_total_bytes = *v;
        read_amdgpu_stats(dev, c.stats);
        if (c.vendor_id == 0 && !c.pci) continue;  // a virtual card (vkms, simpledrm) with no device
        cards.push_back(std::move(c));
    }
    return cards;
}

std::vector<PciDisplayFunction> read_pci_display_functions(const std::string& root) {
    std::vector<PciDisplayFunction> out;
    std::error_code ec;
    fs::path base = fs::path(root) / "sys/bus/pci/devices";
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
        auto addr = PciAddress::parse(it->path().filename().string());
        if (!addr) continue;
        PciDisplayFunction f;
        f.pci = *addr;
        f.class_code = static_cast<uint32_t>(read_u64(it->path() / "class", 16).value_or(0));
        f.vendor_id = static_cast<uint16_t>(read_u64(it->path() / "vendor", 16).value_or(0));
        f.device_id = static_cast<uint16_t>(read_u64(it->path() / "device", 16).value_or(0));
        if ((f.class_code >> 16) != 0x03) continue;
        if (f.vendor_id != kPciVendorAmd && f.vendor_id != kPciVendorNvidia) continue;
        f.driver = driver_of(it->path());
        out.push_back(std::move(f));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.pci < b.pci; });
    return out;
}

std::string lookup_pci_ids_name(const std::string& root, uint16_t vendor_id, uint16_t device_id) {
    for (const char* rel : {"usr/share/hwdata/pci.ids", "usr/share/misc/pci.ids"}) {
        std::ifstream in(fs::path(root) / rel);
        if (!in) continue;
        // Vendor lines start in column 0 ("1002  Advanced Micro..."), device lines with one tab.
        std::string vendor_hex = fmt::format("{:04x}", vendor_id), device_hex = fmt::format("{:04x}", device_id);
        bool in_vendor = false;
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#') continue;
            if (line[0] != '\t') {
                if (in_vendor) break;
                in_vendor = line.starts_with(vendor_hex + " ");
            } else if (in_vendor && line.size() > 7 && line[1] != '\t' && line.compare(1, 4, device_hex) == 0) {
                size_t start = line.find_first_not_of(' ', 5);
                return start == std::string::npos ? "" : line.substr(start);
            }
        }
        return "";
    }
    return "";
}

std::vector<int> apply_visibility_list(const std::string& list, const std::vector<std::string>& ids) {
    std::vector<int> out;
    std::string_view rest = list;
    while (!rest.empty()) {
        size_t comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
        int index = -1;
        if (auto v = parse_u64(item); v && std::to_string(*v) == item) {
            index = *v < ids.size() ? static_cast<int>(*v) : -1;
        } else {
            for (size_t i = 0; i < ids.size(); ++i) {
                if (!ids[i].empty() && !item.empty() && ids[i].starts_with(item)) index = static_cast<int>(i);
            }
        }
        // Like the runtimes: the list ends at the first entry that names no device.
        if (index < 0 || std::find(out.begin(), out.end(), index) != out.end()) break;
        out.push_back(index);
    }
    return out;
}

std::vector<GpuDevice> list_sysfs_devices(const std::string& root, const VisibilityVariables& visibility) {
    std::vector<GpuDevice> out;

    // HIP numbers the GPU agents in KFD node order; ROCR_VISIBLE_DEVICES filters first, then
    // HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES, which HIP honours too) picks from the rest.
    auto nodes = read_kfd_gpu_nodes(root);
    std::vector<int> order(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) order[i] = static_cast<int>(i);
    std::vector<std::string> hidden(nodes.size());
    auto filter = [&](const std::optional<std::string>& list, const char* variable) {
        if (!list) return;
        std::vector<std::string> ids;
        for (int i : order) ids.push_back(fmt::format("GPU-{:016x}", nodes[static_cast<size_t>(i)].unique_id));
        std::vector<int> kept;
        for (int pos : apply_visibility_list(*list, ids)) kept.push_back(order[static_cast<size_t>(pos)]);
        for (int i : order) {
            if (std::find(kept.begin(), kept.end(), i) == kept.end() && hidden[static_cast<size_t>(i)].empty())
                hidden[static_cast<size_t>(i)] = fmt::format("{}={}", variable, *list);
        }
        order = kept;
    };
    filter(visibility.rocr_visible_devices, "ROCR_VISIBLE_DEVICES");
    if (visibility.hip_visible_devices) {
        filter(visibility.hip_visible_devices, "HIP_VISIBLE_DEVICES");
    } else {
        filter(visibility.cuda_visible_devices, "CUDA_VISIBLE_DEVICES");
    }

    for (size_t i = 0; i < nodes.size(); ++i) {
        const KfdGpuNode& n = nodes[i];
        GpuDevice d;
        d.vendor = GpuVendor::amd;
        d.arch = n.arch;
        d.wave_size = n.wave_front_size;
        d.compute_units = n.simds_per_cu > 0 ? n.simd_count / n.simds_per_cu : 0;
        d.vram_total_bytes = n.local_memory_bytes;
        d.pci = n.pci;
        d.pci_device_id = n.device_id;
        d.has_compute_driver = true;
        d.sources = {"kfd"};
        if (n.unique_id != 0) d.uuid = fmt::format("GPU-{:016x}", n.unique_id);
        const AmdArchInfo* info = find_amd_arch(n.arch);
        if (n.cpu_cores_count > 0 || (info && info->integrated_only)) d.kind = GpuKind::integrated;
        else if (info) d.kind = GpuKind::discrete;
        auto pos = std::find(order.begin(), order.end(), static_cast<int>(i));
        if (pos != order.end()) {
            d.runtime_ordinal = static_cast<int>(pos - order.begin());
            d.ordinal_predicted = true;
        }
        d.hidden_by = hidden[i];
        out.push_back(std::move(d));
    }

    for (const DrmCard& c : read_drm_cards(root)) {
        GpuVendor v = vendor_of(c.vendor_id);
        if (v == GpuVendor::unknown) continue;
        GpuDevice d;
        d.vendor = v;
        d.pci = c.pci;
        d.pci_device_id = c.device_id;
        d.kernel_driver = c.driver;
        d.name = c.product_name;
        if (c.vram_total_bytes) d.vram_total_bytes = *c.vram_total_bytes;
        d.stats = c.stats;
        d.sources = {"drm"};
        out.push_back(std::move(d));
    }

    for (const PciDisplayFunction& f : read_pci_display_functions(root)) {
        GpuDevice d;
        d.vendor = vendor_of(f.vendor_id);
        d.pci = f.pci;
        d.pci_device_id = f.device_id;
        d.kernel_driver = f.driver;
        d.name = lookup_pci_ids_name(root, f.vendor_id, f.device_id);
        d.sources = {"pci"};
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace strata
