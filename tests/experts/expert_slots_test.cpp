// Residency of experts in VRAM slots and admission without a copy (experts/expert_slots.h), and
// which streamed experts may keep their slot. The last case is the bug small rings found: an
// expert admitted with a slot a later copy of the same step had overwritten (bench/results/
// 2026-11-30-scan-steps).
#include "experts/expert_slots.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace strata {
namespace {

using Pairs = std::vector<std::pair<int32_t, int32_t>>;

TEST(ExpertSlots, CacheThenRingAndPlacing) {
    ExpertSlots s(10, 3, 4);
    EXPECT_EQ(s.slot_count(), 7u);
    EXPECT_EQ(s.ring(), (std::vector<int32_t>{3, 4, 5, 6}));
    EXPECT_FALSE(s.resident(7));
    s.place(7, 0);
    s.place(2, 2);
    EXPECT_TRUE(s.resident(7));
    EXPECT_EQ(s.slot_of(7), 0);
    std::vector<uint32_t> residents;
    s.residents(residents);
    EXPECT_EQ(residents, (std::vector<uint32_t>{7, 2}));
}

TEST(ExpertSlots, AdmissionSwapsTheVictimsSlotIntoTheRing) {
    ExpertSlots s(10, 2, 4);
    s.place(1, 0);
    s.place(8, 1);
    EXPECT_TRUE(s.admit(5, 4, 8));  // 5 was streamed into ring slot 4; 8 leaves slot 1
    EXPECT_EQ(s.slot_of(5), 4);
    EXPECT_FALSE(s.resident(8));
    EXPECT_EQ(s.ring(), (std::vector<int32_t>{2, 3, 1, 5}));  // slot 1 took slot 4's place
    std::vector<uint32_t> residents;
    s.residents(residents);
    EXPECT_EQ(residents, (std::vector<uint32_t>{1, 5}));
}

TEST(ExpertSlots, AdmissionRefusedWhenItCannotHold) {
    ExpertSlots s(10, 2, 2);
    s.place(1, 0);
    EXPECT_FALSE(s.admit(5, 2, 9));  // the victim is not resident
    EXPECT_FALSE(s.admit(5, 0, 1));  // slot 0 is not in the ring
    EXPECT_FALSE(s.admit(1, 2, 1));  // already resident
    EXPECT_FALSE(s.resident(5));
    EXPECT_EQ(s.ring(), (std::vector<int32_t>{2, 3}));
    EXPECT_EQ(s.slot_of(1), 0);
}

TEST(AdmissionCandidates, EveryStreamedExpertWhenNoSlotIsReused) {
    AdmissionCandidates c;
    c.collect(100, std::vector<int32_t>{3, 7}, std::vector<int32_t>{10, 11}, Pairs{{4, 12}}, {}, 16);
    EXPECT_EQ(c.keys(), (std::vector<uint32_t>{103, 107, 104}));
    EXPECT_EQ(c.slots(), (std::vector<int32_t>{10, 11, 12}));
}

// Five experts through a ring of two halves of two: the fifth reuses the first's slot.
TEST(AdmissionCandidates, OnlyTheLastCopyIntoASlotKeepsIt) {
    AdmissionCandidates c;
    c.collect(0, std::vector<int32_t>{1, 2, 3, 4, 5}, std::vector<int32_t>{30, 31, 20, 21, 30}, {}, {}, 40);
    EXPECT_EQ(c.keys(), (std::vector<uint32_t>{2, 3, 4, 5}));
    EXPECT_EQ(c.slots(), (std::vector<int32_t>{31, 20, 21, 30}));
}

TEST(AdmissionCandidates, CopiesAheadWhoseSlotWasReusedAreLeftOut) {
    AdmissionCandidates c;
    // Expert 9 was copied ahead into slot 20; this step's second chunk went there too. The next
    // layer's copies ahead take slot 31, where expert 2 was streamed.
    c.collect(0, std::vector<int32_t>{1, 2, 3}, std::vector<int32_t>{30, 31, 20}, Pairs{{9, 20}, {8, 22}}, Pairs{{6, 31}}, 40);
    EXPECT_EQ(c.keys(), (std::vector<uint32_t>{1, 3, 8}));
    EXPECT_EQ(c.slots(), (std::vector<int32_t>{30, 20, 22}));
    // The scratch is clean for the next step: nothing reused, everything is a candidate.
    c.collect(0, std::vector<int32_t>{4}, std::vector<int32_t>{31}, Pairs{{5, 20}}, {}, 40);
    EXPECT_EQ(c.keys(), (std::vector<uint32_t>{4, 5}));
}

}  // namespace
}  // namespace strata
