#include "runtime/draft_length.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace strata {

namespace {
// Before any test: a draft is as likely accepted as not, worth two tests of evidence.
constexpr double kPriorAccepted = 1.0, kPriorChecked = 2.0;
// Before a pass of several tokens is measured: each extra token costs a tenth of a decode step
// (optimistic, so that it is tried; the measurement then replaces the guess).
constexpr double kPriorSlope = 0.1;
}  // namespace

DraftLength::DraftLength(const DraftLengthOptions& options)
    : options_(options),
      seconds_(static_cast<size_t>(std::max<int64_t>(options.k_max, 0) + 2), 0.0),
      weight_(seconds_.size(), 0.0) {
    STRATA_CHECK(options.k_max >= 0, "the draft length's maximum is 0 or more");
}

double DraftLength::acceptance() const { return (accepted_ + kPriorAccepted) / (checked_ + kPriorChecked); }

double DraftLength::expected_tokens(int64_t k) const {
    const double a = acceptance();
    double sum = 0.0, term = 1.0;
    for (int64_t i = 0; i <= k; ++i, term *= a) sum += term;
    return sum;
}

double DraftLength::pass_seconds(int64_t n) const {
    const auto measured = [&](int64_t m) { return weight_[static_cast<size_t>(m)] > 0.0; };
    const auto mean = [&](int64_t m) { return seconds_[static_cast<size_t>(m)] / weight_[static_cast<size_t>(m)]; };
    if (n >= 1 && n < static_cast<int64_t>(seconds_.size()) && measured(n)) return mean(n);
    // Between the nearest measured sizes below and above; past the last, along the slope from
    // one token to it (or the prior slope from one token).
    int64_t lo = 0, hi = 0;
    for (int64_t m = 1; m < static_cast<int64_t>(seconds_.size()); ++m) {
        if (!measured(m)) continue;
        if (m < n) lo = m;
        if (m > n && hi == 0) hi = m;
    }
    if (lo == 0 && hi == 0) return 0.0;
    if (lo > 0 && hi > 0) return mean(lo) + (mean(hi) - mean(lo)) * static_cast<double>(n - lo) / static_cast<double>(hi - lo);
    const int64_t known = lo > 0 ? lo : hi;
    const double base = measured(1) ? mean(1) : mean(known) / (1.0 + kPriorSlope * static_cast<double>(known - 1));
    const double slope = (known > 1 && measured(1)) ? (mean(known) - base) / static_cast<double>(known - 1) : kPriorSlope * base;
    return std::max(base + slope * static_cast<double>(n - 1), 0.0);
}

int64_t DraftLength::best() const {
    if (!options_.adaptive) return options_.k_max;
    // A plain step first: the yardstick every pass is weighed against. Then the longest pass,
    // whose cost the prior guesses low so that it is tried; its measurement replaces the guess.
    if (weight_[1] <= 0.0) return 0;
    const double plain = pass_seconds(1);
    int64_t best_k = 0;
    double best_rate = 1.0 / plain;
    for (int64_t k = 1; k <= options_.k_max; ++k) {
        const double t = pass_seconds(k + 1);
        const double rate = t > 0.0 ? expected_tokens(k) / t : 0.0;
        if (rate > best_rate) best_rate = rate, best_k = k;
    }
    return best_k;
}

int64_t DraftLength::choose() {
    const int64_t k = best();
    if (k > 0 || options_.k_max == 0) {
        steps_since_probe_ = 0;
        return k;
    }
    if (++steps_since_probe_ < options_.probe_every) return 0;
    steps_since_probe_ = 0;
    return 1;
}

void DraftLength::record(int64_t drafted, int64_t accepted, double seconds) {
    STRATA_CHECK(drafted >= 0 && accepted >= 0 && accepted <= drafted, "a step accepts at most the drafts it verified");
    const size_t n = static_cast<size_t>(std::min<int64_t>(drafted + 1, static_cast<int64_t>(seconds_.size()) - 1));
    // Each size's mean forgets its own old passes, so a size measured rarely keeps its estimate.
    seconds_[n] = seconds_[n] * options_.decay + seconds;
    weight_[n] = weight_[n] * options_.decay + 1.0;
    if (drafted == 0) return;
    // Tests run until the first rejection: `accepted` passes and, unless all passed, one failure.
    accepted_ = accepted_ * options_.decay + static_cast<double>(accepted);
    checked_ = checked_ * options_.decay + static_cast<double>(accepted + (accepted < drafted ? 1 : 0));
}

}  // namespace strata
