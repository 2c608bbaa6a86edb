// SpinBackoff on recorded outcomes: polls that keep running out stop polling for a while, one
// that succeeds clears the count, and polling comes back after the rest.
#include <gtest/gtest.h>

#include "core/spin_backoff.h"

namespace strata {
namespace {

TEST(SpinBackoff, PollsUntilEnoughFailuresInARow) {
    SpinBackoff b;
    for (int i = 0; i < SpinBackoff::kFailuresToRest - 1; ++i) {
        ASSERT_TRUE(b.should_spin());
        b.record(true, false);
    }
    EXPECT_TRUE(b.should_spin());
    b.record(true, false);
    EXPECT_FALSE(b.should_spin());
    EXPECT_EQ(b.rests(), 1);
}

// An idle machine: most polls succeed, the odd miss (a pause between tokens) never adds up.
TEST(SpinBackoff, ASuccessClearsTheFailures) {
    SpinBackoff b;
    for (int round = 0; round < 1000; ++round) {
        for (int i = 0; i < SpinBackoff::kFailuresToRest - 1; ++i) b.record(true, false);
        b.record(true, true);
        ASSERT_TRUE(b.should_spin());
    }
    EXPECT_EQ(b.rests(), 0);
}

TEST(SpinBackoff, PollsAgainAfterTheRest) {
    SpinBackoff b;
    for (int i = 0; i < SpinBackoff::kFailuresToRest; ++i) b.record(true, false);
    for (int i = 0; i < SpinBackoff::kRestWaits; ++i) {
        ASSERT_FALSE(b.should_spin()) << i;
        b.record(false, i % 2 == 0);
    }
    EXPECT_TRUE(b.should_spin());
    // Still contended: the next run of failures rests again.
    for (int i = 0; i < SpinBackoff::kFailuresToRest; ++i) b.record(true, false);
    EXPECT_FALSE(b.should_spin());
    EXPECT_EQ(b.rests(), 2);
}

}  // namespace
}  // namespace strata
