#include "device/select.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "device/merge.h"

namespace strata {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<int> parse_ordinal(std::string_view s) {
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
    return v;
}

std::string candidates_text(const std::vector<GpuDevice>& devices, const std::vector<size_t>& which) {
    std::string text;
    for (size_t i : which) text += fmt::format("\n  {}", describe_device(devices[i]));
    return text;
}

std::vector<size_t> all_indices(const std::vector<GpuDevice>& devices) {
    std::vector<size_t> v(devices.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
}

Result<DeviceChoice> chosen(const std::vector<GpuDevice>& devices, size_t index, std::string_view spec, std::string_view what) {
    const GpuDevice& d = devices[index];
    if (!d.usable) {
        return Status::error("--device {} ({}): the device it names cannot be used: {}: {} (choose another, or `auto`)", spec, what,
                             describe_device(d), fmt::join(d.reasons, "; "));
    }
    return DeviceChoice{index, fmt::format("{} {}", what, spec)};
}

Result<DeviceChoice> unique_match(const std::vector<GpuDevice>& devices, const std::vector<size_t>& matches,
                                  std::string_view spec, std::string_view what) {
    if (matches.size() == 1) return chosen(devices, matches[0], spec, what);
    if (matches.empty()) {
        return Status::error("--device {}: expected a {} of one of these devices, got no match (`strata devices` lists them):{}", spec, what,
                             devices.empty() ? std::string("\n  (no GPU found)") : candidates_text(devices, all_indices(devices)));
    }
    return Status::error("--device {}: expected one device, got {} matching this {} (give a PCI bus id instead):{}", spec, matches.size(), what,
                         candidates_text(devices, matches));
}

}  // namespace

std::string describe_device(const GpuDevice& d) {
    std::string ordinal = d.runtime_ordinal ? fmt::format(" ({} {})", backend_name(d.vendor), *d.runtime_ordinal) : "";
    return fmt::format("{} {} {}{}", d.pci ? d.pci->to_string() : "-", d.arch.empty() ? "?" : d.arch, d.name.empty() ? "(unnamed)" : d.name, ordinal);
}

Result<DeviceChoice> select_device(const std::vector<GpuDevice>& devices, std::string_view spec) {
    std::string s = lower(spec);
    if (s.empty() || s == "auto") {
        AutoPick pick = pick_auto_device(devices);
        return DeviceChoice{pick.index, "auto: " + pick.why};
    }
    if (s == "cpu") return DeviceChoice{std::nullopt, "--device cpu"};

    std::string_view pci_text = spec.starts_with("pci:") ? spec.substr(4) : spec;
    if (auto pci = PciAddress::parse(pci_text)) {
        std::vector<size_t> matches;
        for (size_t i = 0; i < devices.size(); ++i) {
            if (devices[i].pci && *devices[i].pci == *pci) matches.push_back(i);
        }
        return unique_match(devices, matches, spec, "PCI bus id");
    }
    if (spec.starts_with("pci:")) return Status::error("--device {}: expected a PCI bus id like pci:0000:03:00.0, got {:?}", spec, pci_text);

    // A runtime ordinal: "cuda:1", "hip:1", or a bare number that only one backend has.
    std::string_view backend;
    std::string_view number = s;
    if (s.starts_with("cuda:") || s.starts_with("hip:")) {
        size_t colon = s.find(':');
        backend = std::string_view(s).substr(0, colon);
        number = std::string_view(s).substr(colon + 1);
    }
    if (auto ordinal = parse_ordinal(number)) {
        std::vector<size_t> matches;
        for (size_t i = 0; i < devices.size(); ++i) {
            const GpuDevice& d = devices[i];
            if (d.runtime_ordinal == *ordinal && (backend.empty() || backend == backend_name(d.vendor))) matches.push_back(i);
        }
        // "9070" is more likely part of a name than an ordinal when no device has that ordinal.
        if (matches.empty() && backend.empty()) {
            for (size_t i = 0; i < devices.size(); ++i) {
                if (lower(devices[i].name).find(s) != std::string::npos) matches.push_back(i);
            }
            if (!matches.empty()) return unique_match(devices, matches, spec, "name fragment");
        }
        if (matches.size() > 1 && backend.empty()) {
            return Status::error("--device {}: expected one device, got one per runtime with this ordinal (write cuda:{} or hip:{}):{}", spec, *ordinal, *ordinal,
                                 candidates_text(devices, matches));
        }
        return unique_match(devices, matches, spec, "runtime ordinal");
    }

    // A UUID (or a unique prefix): NVIDIA's "GPU-xxxxxxxx-..." and ROCm's "GPU-<16 hex>".
    if (s.starts_with("gpu-") || s.starts_with("mig-")) {
        std::vector<size_t> matches;
        for (size_t i = 0; i < devices.size(); ++i) {
            if (!devices[i].uuid.empty() && lower(devices[i].uuid).starts_with(s)) matches.push_back(i);
        }
        return unique_match(devices, matches, spec, "UUID");
    }

    std::vector<size_t> matches;
    for (size_t i = 0; i < devices.size(); ++i) {
        if (lower(devices[i].name).find(s) != std::string::npos) matches.push_back(i);
    }
    return unique_match(devices, matches, spec, "name fragment");
}

VisibilitySetting visibility_setting_for(const GpuDevice& device, const VisibilityVariables& user) {
    VisibilitySetting v;
    if (device.vendor == GpuVendor::nvidia) {
        if (user.cuda_visible_devices) {
            v.note = fmt::format("CUDA_VISIBLE_DEVICES={} was set by you and is kept; ordinals count within it", *user.cuda_visible_devices);
            return v;
        }
        // The UUID names the card whatever CUDA_DEVICE_ORDER says; the ordinal is the fallback.
        v.variable = "CUDA_VISIBLE_DEVICES";
        v.value = !device.uuid.empty() ? device.uuid : device.runtime_ordinal ? std::to_string(*device.runtime_ordinal) : "";
    } else if (device.vendor == GpuVendor::amd) {
        if (user.hip_visible_devices || user.rocr_visible_devices || user.cuda_visible_devices) {
            v.note = "a HIP/ROCR/CUDA_VISIBLE_DEVICES variable was set by you and is kept; ordinals count within it";
            return v;
        }
        v.variable = "HIP_VISIBLE_DEVICES";
        v.value = device.runtime_ordinal ? std::to_string(*device.runtime_ordinal) : "";
    }
    if (v.value.empty()) v.variable.clear();
    else v.note = fmt::format("{}={} so the runtime sees only {}", v.variable, v.value, describe_device(device));
    return v;
}

}  // namespace strata
