#include "experts/scan_steps.h"

#include <algorithm>

namespace strata {

bool is_scan_step(size_t experts_used, size_t experts_per_layer, double coverage) {
    return experts_per_layer > 0 && static_cast<double>(experts_used) >= coverage * static_cast<double>(experts_per_layer);
}

void choose_copy_ahead(std::vector<AheadCandidate>& candidates, size_t room, std::vector<int32_t>& out) {
    out.clear();
    const size_t take = std::min(room, candidates.size());
    const auto hotter = [](const AheadCandidate& a, const AheadCandidate& b) {
        return a.heat != b.heat ? a.heat > b.heat : a.expert < b.expert;
    };
    std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(take), candidates.end(), hotter);
    for (size_t i = 0; i < take; ++i) out.push_back(candidates[i].expert);
}

}  // namespace strata
