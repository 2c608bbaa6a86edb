// The turn checkpoints' cache: the latest checkpoint of a slot within a limit, replacement at the
// same position, the byte budget with least-recently-used eviction, the drop of a slot's
// checkpoints past a divergence, refusal of a state larger than the budget; and the turn starts
// found in a prompt rendered with and without its generation prompt.
#include <gtest/gtest.h>

#include "server/checkpoint_cache.h"
#include "server/turn_starts.h"

namespace strata::server {
namespace {

RecurrentSnapshot state_at(int64_t n_past, size_t bytes, uint8_t fill = 0) {
    return RecurrentSnapshot{n_past, std::vector<uint8_t>(bytes, fill)};
}

TEST(CheckpointCache, FindsTheLatestCheckpointOfItsSlotWithinTheLimit) {
    CheckpointCache cache(1000);
    ASSERT_TRUE(cache.put(0, state_at(10, 100)));
    ASSERT_TRUE(cache.put(0, state_at(30, 100)));
    ASSERT_TRUE(cache.put(1, state_at(20, 100)));
    EXPECT_EQ(cache.best(0, 9), 0);
    EXPECT_EQ(cache.best(0, 10), 10);
    EXPECT_EQ(cache.best(0, 29), 10);  // slot 1's 20 is not slot 0's
    EXPECT_EQ(cache.best(0, 1000), 30);
    EXPECT_EQ(cache.best(1, 1000), 20);
    EXPECT_EQ(cache.best(2, 1000), 0);
    ASSERT_NE(cache.take(0, 30), nullptr);
    EXPECT_EQ(cache.take(0, 30)->n_past, 30);
    EXPECT_EQ(cache.take(0, 20), nullptr);
    const CheckpointStats s = cache.stats();
    EXPECT_EQ(s.entries, 3);
    EXPECT_EQ(s.bytes, 300u);
    EXPECT_EQ(s.stored, 3u);
}

TEST(CheckpointCache, ReplacesACheckpointAtTheSamePosition) {
    CheckpointCache cache(1000);
    ASSERT_TRUE(cache.put(0, state_at(10, 100, 1)));
    ASSERT_TRUE(cache.put(0, state_at(10, 200, 2)));
    EXPECT_EQ(cache.stats().entries, 1);
    EXPECT_EQ(cache.stats().bytes, 200u);
    EXPECT_EQ(cache.take(0, 10)->bytes[0], 2);
}

TEST(CheckpointCache, TheBudgetEvictsTheLeastRecentlyUsed) {
    CheckpointCache cache(300);
    ASSERT_TRUE(cache.put(0, state_at(10, 100)));
    ASSERT_TRUE(cache.put(0, state_at(20, 100)));
    ASSERT_TRUE(cache.put(1, state_at(5, 100)));
    ASSERT_NE(cache.take(0, 10), nullptr);  // used: now the most recent
    ASSERT_TRUE(cache.put(1, state_at(7, 150)));  // 450 > 300: (0, 20) then (1, 5) go
    EXPECT_EQ(cache.best(0, 100), 10);
    EXPECT_EQ(cache.best(1, 6), 0);
    EXPECT_EQ(cache.best(1, 100), 7);
    const CheckpointStats s = cache.stats();
    EXPECT_EQ(s.evicted, 2u);
    EXPECT_EQ(s.bytes, 250u);
    EXPECT_LE(s.bytes, s.budget_bytes);
}

TEST(CheckpointCache, AStateLargerThanTheBudgetIsNotKept) {
    CheckpointCache cache(100);
    ASSERT_TRUE(cache.put(0, state_at(10, 100)));
    EXPECT_FALSE(cache.put(0, state_at(20, 101)));
    EXPECT_EQ(cache.best(0, 100), 10);  // nothing was evicted for it
    EXPECT_EQ(cache.stats().refused, 1u);
    CheckpointCache off(0);
    EXPECT_FALSE(off.enabled());
    EXPECT_FALSE(off.put(0, state_at(1, 1)));
}

TEST(CheckpointCache, DropAfterForgetsOnlyThatSlotsLaterCheckpoints) {
    CheckpointCache cache(1000);
    for (int64_t at : {5, 10, 15}) ASSERT_TRUE(cache.put(0, state_at(at, 10)));
    ASSERT_TRUE(cache.put(1, state_at(12, 10)));
    cache.drop_after(0, 10);
    EXPECT_EQ(cache.best(0, 100), 10);
    EXPECT_EQ(cache.best(1, 100), 12);
    EXPECT_EQ(cache.stats().dropped, 1u);
    EXPECT_EQ(cache.stats().bytes, 30u);
    cache.drop_after(0, 0);
    EXPECT_EQ(cache.best(0, 100), 0);
    EXPECT_EQ(cache.best(1, 100), 12);
}

// Token ids as a template would give them: 1 = BOS, 7 = a control turn marker, others text.
const auto is_control = [](int32_t t) { return t == 1 || t == 7; };

TEST(TurnStarts, EveryControlMarkerAndTheGenerationPromptStart) {
    const std::vector<int32_t> history = {1, 7, 50, 51, 9, 7, 60, 61, 62, 9};  // BOS, system, user
    std::vector<int32_t> prompt = history;
    prompt.insert(prompt.end(), {7, 70, 9});  // the generation prompt
    EXPECT_EQ(turn_starts(prompt, history, is_control, 8), (std::vector<int64_t>{1, 5, 10}));
}

TEST(TurnStarts, ATextMarkerGivesOnlyTheGenerationPromptStart) {
    // '<' (60) starts every turn of this template, but text can spell it too.
    const std::vector<int32_t> history = {60, 80, 62, 40, 60, 81, 62, 41};
    std::vector<int32_t> prompt = history;
    prompt.insert(prompt.end(), {60, 82, 62});
    EXPECT_EQ(turn_starts(prompt, history, is_control, 8), (std::vector<int64_t>{8}));
}

TEST(TurnStarts, ALongConversationKeepsTheFirstAndTheLastTurns) {
    std::vector<int32_t> history = {1};
    for (int turn = 0; turn < 10; ++turn) history.insert(history.end(), {7, 50, 51, 9});  // turns at 1, 5, ..., 37
    std::vector<int32_t> prompt = history;
    prompt.insert(prompt.end(), {7, 70});  // the generation prompt at 41
    EXPECT_EQ(turn_starts(prompt, history, is_control, 4), (std::vector<int64_t>{1, 33, 37, 41}));
    EXPECT_EQ(turn_starts(prompt, history, is_control, 1), (std::vector<int64_t>{41}));
    EXPECT_EQ(turn_starts(prompt, history, is_control, 100).size(), 11u);
}

TEST(TurnStarts, NoneWhenTheHistoryIsNotAPrefix) {
    const std::vector<int32_t> prompt = {1, 7, 50, 9, 7, 70};
    EXPECT_TRUE(turn_starts(prompt, std::vector<int32_t>{1, 7, 51}, is_control, 8).empty());
    EXPECT_TRUE(turn_starts(prompt, prompt, is_control, 8).empty());  // no generation prompt
    EXPECT_TRUE(turn_starts(prompt, std::vector<int32_t>{}, is_control, 8).empty());
}

}  // namespace
}  // namespace strata::server
