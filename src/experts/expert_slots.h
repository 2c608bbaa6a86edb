#pragma once
// Which expert each VRAM slot of the GPU expert tiers holds (gpu_expert_tiers_impl.h). The
// slot pool is the cache, whose residents go by (layer, expert) key, and the staging ring that
// streamed experts pass through. A streamed expert the cache policy admits keeps the ring slot it
// was copied to, and the victim's slot joins the ring in its place, so an admission costs no copy.
// Free of GPU code, so it is tested on any machine (tests/experts/expert_slots_test.cpp).
//
//   ExpertSlots slots(keys, cache_slots, staging_slots);
//   slots.place(key, 0);                                        // filling the cache
//   candidates.collect(...);                                    // who may keep its slot
//   slots.admit(key, ring_slot, victim);                        // the policy's swap

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace strata {

class ExpertSlots {
public:
    ExpertSlots() = default;
    // Slots [0, cache_slots) start as the cache (empty), the rest as the ring.
    ExpertSlots(uint64_t keys, uint64_t cache_slots, uint64_t staging_slots);

    int32_t slot_of(uint32_t key) const { return slot_of_[key]; }  // -1: not in VRAM
    bool resident(uint32_t key) const { return slot_of_[key] >= 0; }
    // Makes `key` the resident of cache slot `slot` (filling the cache at start-up).
    void place(uint32_t key, int32_t slot);
    // `key`, streamed into ring slot `slot` by this step, replaces the resident `victim`: `key`
    // keeps `slot`, and the victim's slot takes its place in the ring. False (and nothing changes)
    // when `victim` is not resident or `slot` is not in the ring.
    bool admit(uint32_t key, int32_t slot, uint32_t victim);

    // The ring's slots: half 0, then half 1.
    const std::vector<int32_t>& ring() const { return ring_; }
    // Every resident's key, in slot order (the policy's eviction candidates).
    void residents(std::vector<uint32_t>& out) const;
    uint64_t slot_count() const { return owner_.size(); }

private:
    std::vector<int32_t> slot_of_;  // by key
    std::vector<int64_t> owner_;    // by slot: key or -1
    std::vector<int32_t> ring_;
};

// The experts of a step that may keep the ring slot they were copied to, if the policy admits
// them: those whose slot no later copy reused. A step that streams more than a ring half wraps
// around the ring; its second chunk can land in the half of the experts copied ahead for it; and
// the next layer's copies ahead (after a scan step) go into the half of its second-to-last chunk.
// Admitting an expert whose slot was overwritten would leave another expert's bytes under its name.
class AdmissionCandidates {
public:
    // streamed[i] was copied into streamed_slots[i] by this step, in that order; copied_before:
    // (expert, slot) computed from copies queued before this step (copied ahead for it);
    // next_ahead: (expert, slot) of the next layer's copies, queued behind this step's. Keys are
    // key_base + expert. The result stays valid until the next call.
    void collect(uint32_t key_base, std::span<const int32_t> streamed, std::span<const int32_t> streamed_slots,
                 std::span<const std::pair<int32_t, int32_t>> copied_before,
                 std::span<const std::pair<int32_t, int32_t>> next_ahead, uint64_t slot_count);

    const std::vector<uint32_t>& keys() const { return keys_; }
    const std::vector<int32_t>& slots() const { return slots_; }  // slots()[i]: keys()[i]'s

private:
    std::vector<uint32_t> keys_;
    std::vector<int32_t> slots_;
    std::vector<int32_t> last_writer_;  // by slot: the last streamed expert's index, or -1
};

}  // namespace strata
