#pragma once
// How concentrated a routing profile is: what share of the routed tokens the most used experts
// take, per layer and over the whole model. Uniform routing gives the top 10% of experts 10% of
// the routings; the further above that, the more a static hot set of that size will hit. The
// cover counts say how many expert slots (hottest_first order) would serve half, or 90%, of the
// profiled routings.
//
//   ExpertProfileSummary s = summarize_expert_profile(profile);
//   fmt::print("top 10% take {:.1%}; 90% of routings need {} slots\n", s.top_share, s.cover_90);

#include <cstdint>
#include <vector>

#include "experts/expert_profile.h"

namespace strata {

struct LayerConcentration {
    uint32_t layer = 0;
    uint64_t routed = 0;     // (token, expert) routings of the layer
    double top_share = 0.0;  // share of them taken by the layer's top experts
    uint32_t unused = 0;     // experts never routed to
};

struct ExpertProfileSummary {
    double top_fraction = 0.1;  // of the experts counted as "top"
    uint32_t top_per_layer = 0; // that fraction of a layer's experts, rounded up (at least 1)
    std::vector<LayerConcentration> layers;
    uint64_t routed = 0;        // over all layers
    uint64_t experts = 0;       // (layer, expert) pairs
    uint64_t unused = 0;        // pairs never routed to
    double top_share = 0.0;     // share of all routings taken by the top fraction of all pairs
    uint64_t cover_half = 0;    // pairs, hottest first, that take at least 50% of the routings
    uint64_t cover_90 = 0;      // ... at least 90%
};

ExpertProfileSummary summarize_expert_profile(const ExpertProfile& profile, double top_fraction = 0.1);

}  // namespace strata
