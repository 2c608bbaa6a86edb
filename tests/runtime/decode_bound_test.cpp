// decode_bound_beside (runtime/decode_bound.h): each repetition is set against the faster of the
// probes on either side of it, and the median of the ratios is reported; malformed input is an
// error, not a crash or a division by zero.

#include <gtest/gtest.h>

#include <vector>

#include "runtime/decode_bound.h"

namespace strata {
namespace {

TEST(DecodeBound, EachRepetitionAgainstTheFasterProbeBesideIt) {
    // 1 GB a token. Repetition 0 ran between probes of 20 and 10 GB/s (bound 20 tok/s), 1 between
    // 10 and 16 (bound 16), 2 between 16 and 8 (bound 16).
    const std::vector<double> rates = {14, 12, 8};
    const std::vector<double> probes = {20e9, 10e9, 16e9, 8e9};
    auto b = decode_bound_beside(rates, probes, 1'000'000'000);
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    ASSERT_EQ(b->bound_tokens_per_second.size(), 3u);
    EXPECT_DOUBLE_EQ(b->bound_tokens_per_second[0], 20);
    EXPECT_DOUBLE_EQ(b->bound_tokens_per_second[1], 16);
    EXPECT_DOUBLE_EQ(b->bound_tokens_per_second[2], 16);
    EXPECT_DOUBLE_EQ(b->ratios[0], 0.7);
    EXPECT_DOUBLE_EQ(b->ratios[1], 0.75);
    EXPECT_DOUBLE_EQ(b->ratios[2], 0.5);
    EXPECT_DOUBLE_EQ(b->median_ratio, 0.7);
}

TEST(DecodeBound, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
    const std::vector<double> rates = {5, 9};
    const std::vector<double> probes = {10e9, 10e9, 10e9};
    auto b = decode_bound_beside(rates, probes, 1'000'000'000);
    ASSERT_TRUE(b.is_ok());
    EXPECT_DOUBLE_EQ(b->median_ratio, 0.7);
}

TEST(DecodeBound, MalformedInputIsAnError) {
    const std::vector<double> rates = {5, 9};
    EXPECT_FALSE(decode_bound_beside(rates, std::vector<double>{10e9, 10e9}, 1000).is_ok());  // one probe short
    EXPECT_FALSE(decode_bound_beside({}, std::vector<double>{10e9}, 1000).is_ok());
    EXPECT_FALSE(decode_bound_beside(rates, std::vector<double>{10e9, 10e9, 10e9}, 0).is_ok());
    EXPECT_FALSE(decode_bound_beside(rates, std::vector<double>{0, 0, 10e9}, 1000).is_ok());
}

}  // namespace
}  // namespace strata
