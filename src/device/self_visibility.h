#pragma once
// Once Strata has picked its GPU(s), it narrows the vendor runtime to them with the vendor's
// visibility variable (CUDA_VISIBLE_DEVICES on NVIDIA, HIP_VISIBLE_DEVICES on AMD), so the
// runtime never initializes the other cards — on AMD an unsupported iGPU can fail the whole HIP
// start-up — and ordinals inside the process count only the chosen cards. The runtime reads the
// variable once, when it starts, and picking the card has started it; so the process runs itself
// again (exec) with the variable set and a marker that names the chosen cards by PCI bus id, which
// the new process resolves instead of the flag (an ordinal from the flag would mean another card
// there). Nothing is set when the user set a visibility variable for that vendor (theirs is
// respected and explained), when a chosen card has no PCI bus id, or with
// STRATA_NO_SELF_VISIBILITY=1.
//
//   auto plan = visibility_for_self(devices, chosen, visibility);  // the user's variables
//   if (plan) rerun_with(*plan);          // the cli does the exec; see cli/device_flags.h

#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "device/resolve.h"

namespace strata {

// The environment variable that marks a process Strata re-ran for itself:
// "NAME=VALUE;pci:0000:03:00.0,pci:..." (the chosen cards in the order the flag gave them).
inline constexpr const char* kSelfVisibilityMarker = "STRATA_SELF_VISIBILITY";

struct SelfVisibility {
    std::string variable;  // "CUDA_VISIBLE_DEVICES" or "HIP_VISIBLE_DEVICES"
    std::string value;     // "GPU-3f2a...,GPU-77c1..." (NVIDIA UUIDs) or "1" (HIP ordinals)
    std::vector<std::string> cards;  // "pci:0000:03:00.0" per chosen card, in flag order, repeats kept
    std::string marker() const;      // the marker's value
};

// What to set for `chosen` (indices into `devices`, one vendor), or nullopt when nothing should be.
std::optional<SelfVisibility> visibility_for_self(const std::vector<GpuDevice>& devices,
                                                  const std::vector<ResolvedDevice>& chosen, const VisibilityVariables& user);

// The marker of this process, parsed; nullopt when Strata did not re-run it (or the marker is not
// one it writes).
std::optional<SelfVisibility> parse_self_visibility_marker(const std::string& marker);

}  // namespace strata
