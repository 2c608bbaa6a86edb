// judge_parity (model/parity.h): strict within the limit; a few positions over it only when every
// arg-max agrees and the rest stays within the limit (a MoE routing near-tie flipped by rounding).
#include <gtest/gtest.h>

#include <vector>

#include "model/parity.h"

namespace strata {
namespace {

ParityReport report(const std::vector<double>& token_nmse, int64_t top1_agree) {
    ParityReport r;
    r.n_tokens = static_cast<int64_t>(token_nmse.size());
    r.token_nmse = token_nmse;
    double sum = 0.0;
    for (double e : token_nmse) sum += e;
    r.nmse = sum / static_cast<double>(token_nmse.size());  // equal norms per position
    r.top1_agree = top1_agree;
    return r;
}

TEST(ParityVerdict, WithinTheLimitPassesAndNamesNoOutliers) {
    const ParityVerdict v = judge_parity(report({1e-7, 2e-7, 1e-7, 3e-7}, 4), 1e-5, 1.0, 2);
    EXPECT_TRUE(v.pass);
    EXPECT_TRUE(v.outliers.empty());
}

TEST(ParityVerdict, TooFewArgMaxAgreementsFailEvenWithinTheLimit) {
    EXPECT_FALSE(judge_parity(report({1e-7, 1e-7, 1e-7, 1e-7}, 2), 1e-5, 0.9, 2).pass);
    EXPECT_TRUE(judge_parity(report({1e-7, 1e-7, 1e-7, 1e-7}, 2), 1e-5, 0.5, 2).pass);
}

TEST(ParityVerdict, ARoutingFlipAtTheEndPassesAndIsNamed) {
    std::vector<double> e(32, 1e-7);
    e[30] = 8e-2, e[31] = 1e-3;  // the flipped position and the one after it
    e[26] = 1.05e-5;              // a little over: rounding noise of one position, kept in the rest
    const ParityVerdict v = judge_parity(report(e, 32), 1e-5, 1.0, 2);
    EXPECT_TRUE(v.pass);
    EXPECT_EQ(v.outliers, (std::vector<int64_t>{30, 31}));
    EXPECT_NEAR(v.nmse_without_outliers, (29 * 1e-7 + 1.05e-5) / 30, 1e-12);
}

TEST(ParityVerdict, OutliersFailWhenAnArgMaxDisagreesOrTooManyOrTheRestIsOff) {
    std::vector<double> e(32, 1e-7);
    e[30] = 8e-2;
    EXPECT_FALSE(judge_parity(report(e, 31), 1e-5, 0.9, 2).pass);  // an arg-max differs
    e[10] = e[11] = 1e-3;
    EXPECT_FALSE(judge_parity(report(e, 32), 1e-5, 1.0, 2).pass);  // three positions over
    std::vector<double> off(32, 5e-5);                                 // every position a little off
    off[3] = 1e-1;
    EXPECT_FALSE(judge_parity(report(off, 32), 1e-5, 1.0, 2).pass);
    EXPECT_FALSE(judge_parity(report({1e-7, 1e-1}, 2), 1e-5, 1.0, 0).pass);  // none allowed
}

}  // namespace
}  // namespace strata
