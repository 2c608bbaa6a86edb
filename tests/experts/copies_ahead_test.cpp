// copies_ahead_for (experts/copies_ahead.h): the balance between the link's copies ahead and the
// chain plus the CPU's share of the rest, with costs of the H200 runs (chain ~60 µs a layer, an
// expert ~32 µs on the CPU and ~57 µs on the link), and its limits.
#include "experts/copies_ahead.h"

#include <gtest/gtest.h>

#include <limits>

namespace strata {
namespace {

constexpr double kChain = 60e-6, kCpu = 32e-6, kLink = 57e-6;

TEST(CopiesAhead, BalancesTheLinkAgainstTheChainAndTheCpu) {
    // (60 + 8·32) / 89 = 3.55; (60 + 4·32) / 89 = 2.11; (60 + 1·32) / 89 = 1.03.
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, kLink, 8, 8), 3u);
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, kLink, 4, 8), 2u);
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, kLink, 1, 8), 1u);
    // A slower link takes fewer; a longer chain or a slower CPU more.
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, 4 * kLink, 8, 8), 1u);
    EXPECT_EQ(copies_ahead_for(4 * kChain, kCpu, kLink, 8, 8), 5u);
    EXPECT_EQ(copies_ahead_for(kChain, 3 * kCpu, kLink, 8, 8), 5u);
}

TEST(CopiesAhead, NeverMoreThanTheCapOrTheMisses) {
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, kLink, 8, 2), 2u);
    EXPECT_EQ(copies_ahead_for(1.0, kCpu, kLink, 3, 8), 3u);  // a very long chain: every miss
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, kLink, 0, 8), 0u);
    EXPECT_EQ(copies_ahead_for(0.0, 0.0, kLink, 8, 8), 0u);   // a free CPU: none
}

TEST(CopiesAhead, UnmeasuredCostsFallBackToTheCap) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(copies_ahead_for(kChain, kCpu, 0.0, 8, 3), 3u);
    EXPECT_EQ(copies_ahead_for(nan, kCpu, kLink, 8, 3), 3u);
    EXPECT_EQ(copies_ahead_for(kChain, nan, kLink, 2, 3), 2u);
}

}  // namespace
}  // namespace strata
