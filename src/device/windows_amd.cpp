#include "device/windows_amd.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "device/gpu_arch.h"

#ifdef _WIN32
#include <windows.h>
// clang-format off: initguid.h must come first so devguid.h defines GUID_DEVCLASS_DISPLAY.
#include <initguid.h>
#include <devguid.h>
#include <setupapi.h>
// clang-format on
#include <map>
#endif

namespace strata {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return lines;
}

std::optional<int64_t> parse_int(std::string_view s, int base = 10) {
    s = trim(s);
    if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end == s.data()) return std::nullopt;
    return v;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// "ven_1002" inside "pci\ven_1002&dev_7550&rev_c0" -> 0x1002.
uint16_t hex_after(std::string_view id, std::string_view tag) {
    std::string low = lower(id);
    size_t at = low.find(tag);
    if (at == std::string::npos) return 0;
    return static_cast<uint16_t>(parse_int(std::string_view(low).substr(at + tag.size(), 4), 16).value_or(0));
}

}  // namespace

std::vector<HipInfoDevice> parse_hipinfo_output(std::string_view text) {
    std::vector<HipInfoDevice> out;
    struct PciParts {
        std::optional<int64_t> domain, bus, device;
    };
    std::vector<PciParts> pci_parts;
    for (std::string_view line : split_lines(text)) {
        line = trim(line);
        // hipInfo prints "device#" padded to a column, then the ordinal, with no colon.
        if (line.starts_with("device#")) {
            HipInfoDevice d;
            d.ordinal = static_cast<int>(parse_int(line.substr(7)).value_or(-1));
            out.push_back(d);
            pci_parts.emplace_back();
            continue;
        }
        if (out.empty()) continue;
        size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
        HipInfoDevice& d = out.back();
        PciParts& p = pci_parts.back();
        if (key == "Name") {
            d.name = std::string(value);
        } else if (key == "gcnArchName") {
            d.arch = strip_arch_features(value);
        } else if (key == "totalGlobalMem") {
            // Printed as "15.92 GB" where GB means 2^30 bytes (hipInfo divides by 1024^3).
            double gib = 0;
            auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), gib);
            if (ec == std::errc() && end != value.data()) d.total_global_mem_bytes = static_cast<uint64_t>(std::llround(gib * 1073741824.0));
        } else if (key == "warpSize") {
            d.warp_size = static_cast<int>(parse_int(value).value_or(0));
        } else if (key == "multiProcessorCount") {
            d.compute_units = static_cast<int>(parse_int(value).value_or(0));
        } else if (key == "isIntegrated") {
            if (auto v = parse_int(value)) d.integrated = *v != 0;
        } else if (key == "pciDomainID") {
            p.domain = parse_int(value);
        } else if (key == "pciBusID") {
            p.bus = parse_int(value);
        } else if (key == "pciDeviceID") {
            p.device = parse_int(value);
        }
    }
    for (size_t i = 0; i < out.size(); ++i) {
        const PciParts& p = pci_parts[i];
        if (!p.bus || !p.device || *p.bus < 0 || *p.bus > 255 || *p.device < 0 || *p.device > 31) continue;
        PciAddress a;
        a.domain = static_cast<uint32_t>(p.domain.value_or(0));
        a.bus = static_cast<uint32_t>(*p.bus);
        a.device = static_cast<uint32_t>(*p.device);
        out[i].pci = a;
    }
    return out;
}

std::vector<DisplayAdapterValues> parse_reg_query_output(std::string_view text) {
    std::vector<DisplayAdapterValues> out;
    bool in_adapter_key = false;
    for (std::string_view raw : split_lines(text)) {
        std::string_view line = trim(raw);
        if (line.starts_with("HKEY_")) {
            // Adapter keys end in a four-digit instance ("\0001"); deeper keys ("\0001\Settings")
            // and the class key itself hold other values.
            size_t slash = line.rfind('\\');
            std::string_view last = line.substr(slash + 1);
            in_adapter_key = last.size() == 4 && std::all_of(last.begin(), last.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
            if (in_adapter_key) out.push_back(DisplayAdapterValues{std::string(line), "", "", {}, {}, {}});
            continue;
        }
        if (!in_adapter_key || line.empty()) continue;
        // "    Name    REG_TYPE    data": fields separated by runs of four spaces.
        size_t type_at = line.find("    REG_");
        if (type_at == std::string_view::npos) continue;
        std::string_view name = trim(line.substr(0, type_at));
        std::string_view rest = trim(line.substr(type_at));
        size_t data_at = rest.find("    ");
        std::string_view type = rest.substr(0, data_at);
        std::string_view data = data_at == std::string_view::npos ? std::string_view() : trim(rest.substr(data_at));
        DisplayAdapterValues& a = out.back();
        if (name == "DriverDesc") {
            a.driver_desc = std::string(data);
        } else if (name == "MatchingDeviceId") {
            a.matching_device_id = std::string(data);
        } else if (name == "LocationInformation") {
            a.pci = parse_windows_location(data);
        } else if (name == "HardwareInformation.qwMemorySize" && type == "REG_QWORD") {
            if (auto v = parse_int(data, 16); v && *v >= 0) a.qw_memory_size = static_cast<uint64_t>(*v);
        } else if (name == "HardwareInformation.MemorySize") {
            if (type == "REG_DWORD") {
                if (auto v = parse_int(data, 16); v && *v >= 0) a.memory_size = static_cast<uint64_t>(*v);
            } else if (type == "REG_BINARY" && data.size() == 8) {
                // Four little-endian bytes printed in memory order: "00000020" is 0x20000000.
                uint64_t v = 0;
                for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint64_t>(parse_int(data.substr(static_cast<size_t>(i) * 2, 2), 16).value_or(0));
                a.memory_size = v;
            }
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const auto& a) { return a.driver_desc.empty() && a.matching_device_id.empty(); }), out.end());
    return out;
}

std::optional<PciAddress> parse_windows_location(std::string_view text) {
    std::string low = lower(text);
    auto number_after = [&](std::string_view word) -> std::optional<int64_t> {
        size_t at = low.find(word);
        if (at == std::string::npos) return std::nullopt;
        return parse_int(std::string_view(low).substr(at + word.size()));
    };
    auto bus = number_after("bus "), dev = number_after("device "), fn = number_after("function ");
    if (!bus || !dev || !fn || *bus < 0 || *bus > 255 || *dev < 0 || *dev > 31 || *fn < 0 || *fn > 7) return std::nullopt;
    PciAddress a;
    a.bus = static_cast<uint32_t>(*bus);
    a.device = static_cast<uint32_t>(*dev);
    a.function = static_cast<uint32_t>(*fn);
    return a;
}

GpuDevice device_from_hipinfo(const HipInfoDevice& h) {
    GpuDevice d;
    d.vendor = GpuVendor::amd;
    d.name = h.name;
    d.arch = h.arch;
    d.wave_size = h.warp_size;
    d.compute_units = h.compute_units;
    d.vram_total_bytes = h.total_global_mem_bytes;
    d.pci = h.pci;
    if (h.ordinal >= 0) d.runtime_ordinal = h.ordinal;
    d.has_compute_driver = true;
    const AmdArchInfo* info = find_amd_arch(h.arch);
    if (h.integrated) d.kind = *h.integrated ? GpuKind::integrated : GpuKind::discrete;
    else if (info) d.kind = info->integrated_only ? GpuKind::integrated : GpuKind::discrete;
    d.sources = {"hipinfo"};
    return d;
}

GpuDevice device_from_display_adapter(const DisplayAdapterValues& a) {
    GpuDevice d;
    uint16_t vendor = hex_after(a.matching_device_id, "ven_");
    d.vendor = vendor == kPciVendorAmd ? GpuVendor::amd : vendor == kPciVendorNvidia ? GpuVendor::nvidia : GpuVendor::unknown;
    d.pci_device_id = hex_after(a.matching_device_id, "dev_");
    d.name = a.driver_desc;
    if (d.vendor == GpuVendor::amd) d.arch = amd_arch_from_product_name(a.driver_desc);
    d.vram_total_bytes = a.qw_memory_size.value_or(a.memory_size.value_or(0));
    d.pci = a.pci;
    if (const AmdArchInfo* info = find_amd_arch(d.arch)) d.kind = info->integrated_only ? GpuKind::integrated : GpuKind::discrete;
    d.sources = {"registry"};
    return d;
}

#ifdef _WIN32
namespace {

std::optional<std::string> reg_string(HKEY key, const char* name) {
    char buf[512];
    DWORD size = sizeof(buf), type = 0;
    if (RegQueryValueExA(key, name, nullptr, &type, reinterpret_cast<BYTE*>(buf), &size) != ERROR_SUCCESS) return std::nullopt;
    if (type != REG_SZ || size == 0) return std::nullopt;
    return std::string(buf, strnlen(buf, size));
}

std::optional<uint64_t> reg_integer(HKEY key, const char* name) {
    uint64_t v = 0;
    DWORD size = sizeof(v), type = 0;
    if (RegQueryValueExA(key, name, nullptr, &type, reinterpret_cast<BYTE*>(&v), &size) != ERROR_SUCCESS) return std::nullopt;
    if (type == REG_QWORD || ((type == REG_DWORD || type == REG_BINARY) && size == 4)) return size == 4 ? (v & 0xffffffffu) : v;
    return std::nullopt;
}

// Bus ids of the present display adapters, keyed by their instance under the display class key
// ("0001"), so registry entries join hipInfo's devices by bus id rather than by arch.
std::map<std::string, PciAddress> display_adapter_locations() {
    std::map<std::string, PciAddress> out;
    HDEVINFO set = SetupDiGetClassDevsA(&GUID_DEVCLASS_DISPLAY, nullptr, nullptr, DIGCF_PRESENT);
    if (set == INVALID_HANDLE_VALUE) return out;
    SP_DEVINFO_DATA info{};
    info.cbSize = sizeof(info);
    for (DWORD i = 0; SetupDiEnumDeviceInfo(set, i, &info); ++i) {
        char driver[256] = {};
        DWORD bus = 0, address = 0;
        if (!SetupDiGetDeviceRegistryPropertyA(set, &info, SPDRP_DRIVER, nullptr, reinterpret_cast<BYTE*>(driver), sizeof(driver) - 1, nullptr) ||
            !SetupDiGetDeviceRegistryPropertyA(set, &info, SPDRP_BUSNUMBER, nullptr, reinterpret_cast<BYTE*>(&bus), sizeof(bus), nullptr) ||
            !SetupDiGetDeviceRegistryPropertyA(set, &info, SPDRP_ADDRESS, nullptr, reinterpret_cast<BYTE*>(&address), sizeof(address), nullptr))
            continue;
        std::string key(driver);  // "{4d36e968-e325-11ce-bfc1-08002be10318}\0001"
        // SPDRP_ADDRESS of a PCI function is device << 16 | function; Windows shows no domain.
        out[key.substr(key.rfind('\\') + 1)] = PciAddress{0, bus & 0xff, (address >> 16) & 0x1f, address & 0x7};
    }
    SetupDiDestroyDeviceInfoList(set);
    return out;
}

std::string run_hipinfo(const std::vector<HipSdk>& sdks) {
    for (const auto& exe : hipinfo_candidates(sdks)) {
        FILE* pipe = _popen(fmt::format("\"{}\" 2>NUL", exe).c_str(), "r");
        if (!pipe) continue;
        std::string text;
        char buf[4096];
        while (size_t n = fread(buf, 1, sizeof(buf), pipe)) text.append(buf, n);
        if (_pclose(pipe) == 0 && !text.empty()) return text;
    }
    return "";
}

}  // namespace

std::vector<GpuDevice> read_windows_amd_devices(const std::vector<HipSdk>& sdks) {
    std::vector<GpuDevice> out, adapters;
    auto locations = display_adapter_locations();
    const char* class_key = "SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}";
    HKEY cls;
    if (RegOpenKeyExA(HKEY_LOCAL_MACHINE, class_key, 0, KEY_READ, &cls) == ERROR_SUCCESS) {
        char sub[256];
        for (DWORD i = 0;; ++i) {
            DWORD len = sizeof(sub);
            if (RegEnumKeyExA(cls, i, sub, &len, nullptr, nullptr, nullptr, nullptr) != ERROR_SUCCESS) break;
            if (len != 4) continue;  // "Properties" and other non-adapter keys
            HKEY adapter;
            if (RegOpenKeyExA(cls, sub, 0, KEY_READ, &adapter) != ERROR_SUCCESS) continue;
            DisplayAdapterValues a;
            a.key = sub;
            a.driver_desc = reg_string(adapter, "DriverDesc").value_or("");
            a.matching_device_id = reg_string(adapter, "MatchingDeviceId").value_or("");
            a.qw_memory_size = reg_integer(adapter, "HardwareInformation.qwMemorySize");
            a.memory_size = reg_integer(adapter, "HardwareInformation.MemorySize");
            if (auto it = locations.find(a.key); it != locations.end()) a.pci = it->second;
            RegCloseKey(adapter);
            if (!a.matching_device_id.empty()) adapters.push_back(device_from_display_adapter(a));
        }
        RegCloseKey(cls);
    }
    // hipInfo first: merge_devices() lets earlier records win, and hipInfo knows more.
    for (const HipInfoDevice& h : parse_hipinfo_output(run_hipinfo(sdks))) out.push_back(device_from_hipinfo(h));
    out.insert(out.end(), adapters.begin(), adapters.end());
    return out;
}
#else
std::vector<GpuDevice> read_windows_amd_devices(const std::vector<HipSdk>&) { return {}; }
#endif

}  // namespace strata
