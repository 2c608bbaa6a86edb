#include "device/self_visibility.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace strata {

std::string SelfVisibility::marker() const { return fmt::format("{}={};{}", variable, value, fmt::join(cards, ",")); }

std::optional<SelfVisibility> visibility_for_self(const std::vector<GpuDevice>& devices,
                                                  const std::vector<ResolvedDevice>& chosen, const VisibilityVariables& user) {
    if (chosen.empty()) return std::nullopt;
    const GpuVendor vendor = chosen.front().vendor;
    if (!visibility_in_effect(vendor, user).empty()) return std::nullopt;  // the user's variable rules
    SelfVisibility v;
    std::vector<std::string> items;  // one per distinct card, in first-seen order
    for (const ResolvedDevice& r : chosen) {
        if (!r.index || *r.index >= devices.size() || !r.ordinal || r.vendor != vendor) return std::nullopt;
        const GpuDevice& d = devices[*r.index];
        if (!d.pci) return std::nullopt;
        const std::string card = "pci:" + d.pci->to_string();
        const bool seen = std::find(v.cards.begin(), v.cards.end(), card) != v.cards.end();
        v.cards.push_back(card);
        if (seen) continue;
        if (vendor == GpuVendor::nvidia) {
            // UUIDs name a card whatever the runtime's order; ordinals are the fallback.
            items.push_back(d.uuid.empty() ? std::to_string(*r.ordinal) : d.uuid);
        } else if (vendor == GpuVendor::amd) {
            items.push_back(std::to_string(*r.ordinal));
        } else {
            return std::nullopt;
        }
    }
    v.variable = vendor == GpuVendor::nvidia ? "CUDA_VISIBLE_DEVICES" : "HIP_VISIBLE_DEVICES";
    v.value = fmt::format("{}", fmt::join(items, ","));
    return v;
}

std::optional<SelfVisibility> parse_self_visibility_marker(const std::string& marker) {
    const size_t eq = marker.find('='), semi = marker.find(';');
    if (eq == std::string::npos || semi == std::string::npos || semi < eq) return std::nullopt;
    SelfVisibility v;
    v.variable = marker.substr(0, eq);
    v.value = marker.substr(eq + 1, semi - eq - 1);
    if (v.variable != "CUDA_VISIBLE_DEVICES" && v.variable != "HIP_VISIBLE_DEVICES") return std::nullopt;
    std::string rest = marker.substr(semi + 1);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string card = rest.substr(0, comma);
        if (card.rfind("pci:", 0) != 0) return std::nullopt;
        v.cards.push_back(card);
        if (comma == std::string::npos) break;
        rest = rest.substr(comma + 1);
    }
    if (v.cards.empty() || v.value.empty()) return std::nullopt;
    return v;
}

}  // namespace strata
