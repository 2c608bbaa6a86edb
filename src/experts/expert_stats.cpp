#include "experts/expert_stats.h"

namespace strata {

const char* tier_name(Tier tier) {
    switch (tier) {
        case Tier::Slot: return "slot";
        case Tier::Ram: return "ram";
        case Tier::Disk: return "disk";
    }
    return "?";
}

uint64_t ExpertStats::routed_pairs() const {
    uint64_t n = 0;
    for (const TierCounters& t : tiers) n += t.routed_pairs;
    return n;
}

uint64_t ExpertStats::bytes_copied_to_slots() const {
    uint64_t n = 0;
    for (const TierCounters& t : tiers) n += t.bytes_copied_out;
    return n;
}

double ExpertStats::pair_hit_rate() const {
    const uint64_t all = routed_pairs();
    return all ? static_cast<double>(tier(Tier::Slot).routed_pairs) / static_cast<double>(all) : 0.0;
}

}  // namespace strata
