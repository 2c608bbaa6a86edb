#include "experts/expert_slots.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace strata {

ExpertSlots::ExpertSlots(uint64_t keys, uint64_t cache_slots, uint64_t staging_slots)
    : slot_of_(keys, -1), owner_(cache_slots + staging_slots, -1) {
    for (uint64_t s = 0; s < staging_slots; ++s) ring_.push_back(static_cast<int32_t>(cache_slots + s));
}

void ExpertSlots::place(uint32_t key, int32_t slot) {
    STRATA_CHECK(slot_of_[key] < 0 && owner_[static_cast<size_t>(slot)] < 0, "an expert placed twice, or into a taken slot");
    slot_of_[key] = slot;
    owner_[static_cast<size_t>(slot)] = key;
}

bool ExpertSlots::admit(uint32_t key, int32_t slot, uint32_t victim) {
    const int32_t old_slot = slot_of_[victim];
    const auto in_ring = std::find(ring_.begin(), ring_.end(), slot);
    if (old_slot < 0 || in_ring == ring_.end() || slot_of_[key] >= 0) return false;
    slot_of_[victim] = -1;
    owner_[static_cast<size_t>(old_slot)] = -1;
    slot_of_[key] = slot;
    owner_[static_cast<size_t>(slot)] = key;
    *in_ring = old_slot;
    return true;
}

void ExpertSlots::residents(std::vector<uint32_t>& out) const {
    out.clear();
    for (int64_t owner : owner_)
        if (owner >= 0) out.push_back(static_cast<uint32_t>(owner));
}

void AdmissionCandidates::collect(uint32_t key_base, std::span<const int32_t> streamed, std::span<const int32_t> streamed_slots,
                                  std::span<const std::pair<int32_t, int32_t>> copied_before,
                                  std::span<const std::pair<int32_t, int32_t>> next_ahead, uint64_t slot_count) {
    keys_.clear(), slots_.clear();
    if (last_writer_.size() < slot_count) last_writer_.assign(slot_count, -1);
    const auto at = [&](int32_t slot) -> int32_t& { return last_writer_[static_cast<size_t>(slot)]; };
    constexpr int32_t kLater = std::numeric_limits<int32_t>::max();  // written after every streamed copy
    for (size_t i = 0; i < streamed.size(); ++i) at(streamed_slots[i]) = static_cast<int32_t>(i);
    for (const auto& [x, slot] : next_ahead) at(slot) = kLater;
    for (size_t i = 0; i < streamed.size(); ++i) {
        if (at(streamed_slots[i]) != static_cast<int32_t>(i)) continue;
        keys_.push_back(key_base + static_cast<uint32_t>(streamed[i]));
        slots_.push_back(streamed_slots[i]);
    }
    for (const auto& [x, slot] : copied_before) {
        if (at(slot) >= 0) continue;
        keys_.push_back(key_base + static_cast<uint32_t>(x));
        slots_.push_back(slot);
    }
    for (int32_t slot : streamed_slots) at(slot) = -1;
    for (const auto& [x, slot] : next_ahead) at(slot) = -1;
}

}  // namespace strata
