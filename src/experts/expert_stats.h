#pragma once
// Counters of the expert store: where each routed expert was read from (per tier and per layer),
// and the bytes that moved between tiers. `strata bench` prints them and /metrics will export
// them; the tiered-parity test checks they add up (hits + misses = routed pairs).
//
//   const ExpertStats& s = store.stats();
//   fmt::print("hit rate {:.1%} ({} of {} expert uses)\n", s.hit_rate(), s.hits(), s.uses());
//   s.tier(Tier::Disk).bytes_read;   // expert bytes computed straight from the mapped file

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

// Where an expert's bytes are read from, fastest first. Slot: the fast tier (VRAM on a GPU; host
// memory in the CPU emulation). Ram: the pinned arena. Disk: the mapped GGUF, no copy.
enum class Tier : uint8_t { Slot = 0, Ram = 1, Disk = 2 };
constexpr int kTierCount = 3;
const char* tier_name(Tier tier);

struct TierCounters {
    uint64_t expert_uses = 0;   // (layer step, expert) pairs served from this tier
    uint64_t routed_pairs = 0;  // (token, expert) pairs served from this tier
    uint64_t bytes_read = 0;    // expert bytes read for compute (once per expert use)
    uint64_t bytes_copied_out = 0;  // bytes copied from this tier into slots (admissions)
};

struct LayerCounters {
    uint64_t hits = 0;    // expert uses found in a slot
    uint64_t misses = 0;  // expert uses served from RAM or disk
};

struct ExpertStats {
    std::array<TierCounters, kTierCount> tiers{};
    std::vector<LayerCounters> layers;  // by model layer index (dense layers stay zero)
    uint64_t admissions = 0, evictions = 0;
    uint64_t steps = 0;  // MoE layer steps

    TierCounters& tier(Tier t) { return tiers[static_cast<size_t>(t)]; }
    const TierCounters& tier(Tier t) const { return tiers[static_cast<size_t>(t)]; }
    uint64_t hits() const { return tier(Tier::Slot).expert_uses; }
    uint64_t misses() const { return tier(Tier::Ram).expert_uses + tier(Tier::Disk).expert_uses; }
    uint64_t uses() const { return hits() + misses(); }
    uint64_t routed_pairs() const;
    uint64_t bytes_copied_to_slots() const;
    // Fraction of expert uses found in a slot (0 before the first step).
    double hit_rate() const { return uses() ? static_cast<double>(hits()) / static_cast<double>(uses()) : 0.0; }
    // The same counted per routed token: what decides how much of a batch's work the GPU gets.
    double pair_hit_rate() const;
};

}  // namespace strata
