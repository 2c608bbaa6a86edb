#include "device/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "device/enumerate.h"
#include "device/merge.h"
#include "device/select.h"

namespace strata {
namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

const char* runtime_label(GpuVendor v) {
    switch (v) {
        case GpuVendor::nvidia: return "CUDA";
        case GpuVendor::amd: return "HIP";
        default: return "";
    }
}

// "0000:03:00.0 NVIDIA H200: arch sm_90 is not compiled into this build; ..." per device.
std::string devices_with_reasons(const std::vector<GpuDevice>& devices) {
    if (devices.empty()) return "\n  (no GPU found)";
    std::string text;
    for (const GpuDevice& d : devices) {
        text += fmt::format("\n  {}: {}", describe_device(d), d.usable ? "usable" : fmt::format("{}", fmt::join(d.reasons, "; ")));
    }
    return text;
}

std::string visibility_hint(const VisibilityVariables& user) {
    std::vector<std::string> set = visibility_in_effect(GpuVendor::nvidia, user);
    for (const auto& item : visibility_in_effect(GpuVendor::amd, user)) {
        if (std::find(set.begin(), set.end(), item) == set.end()) set.push_back(item);
    }
    if (set.empty()) return "";
    return fmt::format("\n  note: {} set by you: runtime ordinals count within the GPUs it leaves visible, and a GPU it hides cannot be chosen",
                       fmt::join(set, ", "));
}

Result<ResolvedDevice> gpu_chosen(const std::vector<GpuDevice>& devices, size_t index, std::string_view flag, const std::string& why,
                                  const VisibilityVariables& user) {
    const GpuDevice& d = devices[index];
    if (!d.runtime_ordinal) {
        // Usable devices have a compute driver, but NVML alone (no libcuda) numbers nothing.
        return Status::error("--device {}: {} has no runtime ordinal: neither CUDA nor HIP numbered it (install the runtime; `strata devices` shows which ones answered)",
                             flag, describe_device(d));
    }
    ResolvedDevice r;
    r.index = index;
    r.ordinal = d.runtime_ordinal;
    r.vendor = d.vendor;
    r.explanation = fmt::format("strata: using {} GPU {} (pci {}, {}, {}): {}", runtime_label(d.vendor), *d.runtime_ordinal,
                                d.pci ? d.pci->to_string() : "unknown", d.name.empty() ? "unnamed" : d.name, d.arch.empty() ? "arch unknown" : d.arch,
                                why);
    if (auto set = visibility_in_effect(d.vendor, user); !set.empty()) {
        r.explanation += fmt::format("; {} set by you is respected, so ordinal {} counts within the GPUs it leaves visible", fmt::join(set, " and "),
                                     *d.runtime_ordinal);
    }
    if (user.set_by_strata) {
        const std::optional<std::string>& value = *user.set_by_strata == "HIP_VISIBLE_DEVICES" ? user.hip_visible_devices
                                                                                             : user.cuda_visible_devices;
        r.explanation += fmt::format("; Strata set {}={} for itself, so the runtime opens only the chosen card(s)",
                                     *user.set_by_strata, value.value_or(""));
    }
    if (d.ordinal_predicted) r.explanation += "; the ordinal is predicted from the KFD node order (no HIP runtime answered)";
    return r;
}

ResolvedDevice on_cpu(std::string explanation) {
    ResolvedDevice r;
    r.explanation = std::move(explanation);
    return r;
}

}  // namespace

std::vector<std::string> visibility_in_effect(GpuVendor vendor, const VisibilityVariables& user) {
    std::vector<std::string> out;
    auto add = [&](const char* name, const std::optional<std::string>& v) {
        if (v && user.set_by_strata != name) out.push_back(fmt::format("{}={}", name, *v));
    };
    if (vendor == GpuVendor::nvidia) {
        add("CUDA_VISIBLE_DEVICES", user.cuda_visible_devices);
    } else if (vendor == GpuVendor::amd) {
        // ROCr filters the agents first; HIP then numbers what is left through its own variable.
        add("ROCR_VISIBLE_DEVICES", user.rocr_visible_devices);
        if (user.hip_visible_devices) add("HIP_VISIBLE_DEVICES", user.hip_visible_devices);
        else add("CUDA_VISIBLE_DEVICES", user.cuda_visible_devices);
    }
    return out;
}

Result<ResolvedDevice> resolve_device_flag(const std::vector<GpuDevice>& devices, std::string_view flag, const VisibilityVariables& user) {
    const std::string spec = lower(flag);
    if (spec == "cpu") return on_cpu("strata: using the CPU (--device cpu)");

    if (spec.empty() || spec == "auto" || spec == "gpu") {
        // Both arms string_view: with a std::string arm the result would be a temporary copy, viewed dangling.
        const std::string_view shown = spec.empty() ? std::string_view("auto") : std::string_view(spec);
        AutoPick pick = pick_auto_device(devices);
        if (pick.index) return gpu_chosen(devices, *pick.index, shown, fmt::format("--device {} takes {}", shown, pick.why), user);
        if (spec == "gpu") {
            return Status::error("--device gpu: expected a usable GPU, got none (use --device cpu, or see `strata devices`):{}{}",
                                 devices_with_reasons(devices), visibility_hint(user));
        }
        std::vector<std::string> why;
        for (const GpuDevice& d : devices) why.push_back(fmt::format("{}: {}", describe_device(d), fmt::join(d.reasons, ", ")));
        return on_cpu(devices.empty() ? std::string("strata: using the CPU: no GPU found")
                                      : fmt::format("strata: using the CPU: no GPU is usable ({})", fmt::join(why, "; ")));
    }

    auto choice = select_device(devices, flag);
    if (!choice) return Status::error_message(choice.status().message() + visibility_hint(user));
    if (!choice->index) return on_cpu(fmt::format("strata: using the CPU ({})", choice->why));
    return gpu_chosen(devices, *choice->index, flag, fmt::format("named by --device {}", flag), user);
}

Result<std::vector<ResolvedDevice>> resolve_gpus_flag(const std::vector<GpuDevice>& devices, std::string_view flag,
                                                      const VisibilityVariables& user) {
    std::vector<ResolvedDevice> out;
    if (lower(flag) == "all") {
        const bool any_discrete = std::any_of(devices.begin(), devices.end(), [](const GpuDevice& d) {
            return d.usable && d.runtime_ordinal && d.kind == GpuKind::discrete;
        });
        for (size_t i = 0; i < devices.size(); ++i) {
            const GpuDevice& d = devices[i];
            if (!d.usable || !d.runtime_ordinal || (any_discrete && d.kind != GpuKind::discrete)) continue;
            STRATA_ASSIGN_OR_RETURN(ResolvedDevice r, gpu_chosen(devices, i, "all", "listed by --gpus all", user));
            out.push_back(std::move(r));
        }
        std::sort(out.begin(), out.end(), [](const ResolvedDevice& a, const ResolvedDevice& b) { return *a.ordinal < *b.ordinal; });
        if (out.empty()) {
            return Status::error("--gpus all: expected usable GPUs, got none (see `strata devices`):{}{}", devices_with_reasons(devices),
                                 visibility_hint(user));
        }
        return out;
    }
    std::string_view rest = flag;
    while (true) {
        const size_t comma = rest.find(',');
        const std::string item(rest.substr(0, comma));
        const std::string spec = lower(item);
        if (spec.empty() || spec == "cpu" || spec == "auto" || spec == "gpu" || spec == "all") {
            return Status::error("--gpus {}: expected `all` or a comma-separated list of GPUs (ordinal, pci:BUS-ID, UUID), got item {:?}",
                                 flag, item);
        }
        auto choice = select_device(devices, item);
        if (!choice) return Status::error("--gpus {}: {}{}", flag, choice.status().message(), visibility_hint(user));
        if (!choice->index) return Status::error("--gpus {}: item {:?} names no GPU", flag, item);
        STRATA_ASSIGN_OR_RETURN(ResolvedDevice r, gpu_chosen(devices, *choice->index, item, fmt::format("listed by --gpus {}", flag), user));
        if (!out.empty() && r.vendor != out.front().vendor) {
            return Status::error("--gpus {}: {} and {} GPUs need two runtimes; one process uses CUDA or HIP, so list GPUs of one vendor",
                                 flag, vendor_name(out.front().vendor), vendor_name(r.vendor));
        }
        out.push_back(std::move(r));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return out;
}

MachineDevices list_this_machine(const VisibilityVariables& visibility, const HipSdkEnvironment& hip_sdk) {
    EnumerateOptions options;
    options.visibility = visibility;
    options.hip_sdk = hip_sdk;
    options.classify.archs = compiled_gpu_archs();
    options.classify.archs_origin = "this build";
    return MachineDevices{enumerate_devices(options).devices, options.visibility};
}

}  // namespace strata
