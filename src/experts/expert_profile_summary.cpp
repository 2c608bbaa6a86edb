#include "experts/expert_profile_summary.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace strata {

namespace {

// How many of n items `fraction` of them is, rounded up, and never less than one: a 8-expert
// layer's "top 10%" is its single hottest expert.
uint64_t top_count(uint64_t n, double fraction) {
    const auto k = static_cast<uint64_t>(std::ceil(static_cast<double>(n) * fraction - 1e-9));
    return std::clamp<uint64_t>(k, 1, std::max<uint64_t>(n, 1));
}

double share(uint64_t part, uint64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The sum of the k largest counts (sorts `counts`, descending).
uint64_t top_sum(std::vector<uint64_t>& counts, uint64_t k) {
    std::sort(counts.begin(), counts.end(), std::greater<>());
    uint64_t sum = 0;
    for (uint64_t i = 0; i < k && i < counts.size(); ++i) sum += counts[i];
    return sum;
}

}  // namespace

ExpertProfileSummary summarize_expert_profile(const ExpertProfile& profile, double top_fraction) {
    ExpertProfileSummary s;
    s.top_fraction = top_fraction;
    s.top_per_layer = static_cast<uint32_t>(top_count(profile.model.n_expert, top_fraction));
    std::vector<uint64_t> all;
    for (const ExpertProfileLayer& L : profile.layers) {
        LayerConcentration c;
        c.layer = L.layer;
        std::vector<uint64_t> counts = L.counts;
        for (uint64_t n : counts) {
            c.routed += n;
            c.unused += n == 0;
        }
        c.top_share = share(top_sum(counts, s.top_per_layer), c.routed);
        s.routed += c.routed;
        s.unused += c.unused;
        s.layers.push_back(c);
        all.insert(all.end(), L.counts.begin(), L.counts.end());
    }
    s.experts = all.size();
    if (all.empty()) return s;
    s.top_share = share(top_sum(all, top_count(all.size(), top_fraction)), s.routed);
    // `all` is sorted descending now: walk it until each coverage threshold is reached.
    uint64_t running = 0;
    for (size_t i = 0; i < all.size() && s.routed > 0; ++i) {
        running += all[i];
        if (s.cover_half == 0 && 2 * running >= s.routed) s.cover_half = i + 1;
        if (s.cover_90 == 0 && 10 * running >= 9 * s.routed) {
            s.cover_90 = i + 1;
            break;
        }
    }
    return s;
}

}  // namespace strata
