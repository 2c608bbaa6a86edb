#include "runtime/select_candidates.h"

#include <algorithm>
#include <cmath>

namespace strata {
namespace {

// The largest of n values, by eight independent lanes (std::max_element walks one dependent
// compare after another; this loop vectorizes). NaNs are passed over; all NaN: -inf.
float max_of(const float* x, size_t n) {
    float lanes[8];
    std::fill(lanes, lanes + 8, -INFINITY);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 8; ++j) lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
    }
    float top = *std::max_element(lanes, lanes + 8);
    for (; i < n; ++i) top = x[i] > top ? x[i] : top;
    return top;
}

// The logits with the query's penalties applied: `logits` itself when none apply.
const float* penalized(const float* logits, int64_t n_vocab, const CandidateQuery& q, std::vector<float>& scratch) {
    if (q.penalized_ids.empty()) return logits;
    scratch.assign(logits, logits + n_vocab);
    for (size_t i = 0; i < q.penalized_ids.size(); ++i) {
        float& l = scratch[static_cast<size_t>(q.penalized_ids[i])];
        l = penalized_logit(l, q.penalized_counts[i], q.repetition_penalty, q.presence_penalty, q.frequency_penalty);
    }
    return scratch.data();
}

}  // namespace

void select_candidates(const float* raw_logits, int64_t n_vocab, const CandidateQuery& q, CandidateSet& out,
                       std::vector<float>& scratch) {
    const float* logits = penalized(raw_logits, n_vocab, q, scratch);
    const auto n = static_cast<size_t>(n_vocab);
    out.tokens.clear();
    out.sum = 0.0;
    const bool top_k = q.temperature != 0.0f && q.takes_top_k(n_vocab);
    out.top_k = top_k ? q.top_k : 0;
    out.top = top_k ? 0.0f : max_of(logits, n);  // not needed with top-k
    if (q.temperature == 0.0f) {
        size_t first = 0;  // only NaNs: the first, as std::max_element gives
        for (size_t k = 0; k < n; ++k) {
            if (logits[k] == out.top) {
                first = k;
                break;
            }
        }
        out.tokens.push_back({static_cast<int32_t>(first), logits[first]});
        return;
    }
    float floor = -INFINITY;
    if (top_k) {
        const auto k = static_cast<size_t>(q.top_k);
        const size_t chunk = n / k;
        floor = INFINITY;
        for (size_t c = 0; c < k; ++c) floor = std::min(floor, max_of(logits + c * chunk, chunk));
    } else {
        const float top = out.top, temperature = q.temperature;
        double band_mass[kMassBands] = {};
        for (size_t i = 0; i < n; ++i) {
            const float e = std::exp((logits[i] - top) / temperature);
            out.sum += e;
            band_mass[mass_band(top, logits[i], temperature)] += e;
        }
        if (q.top_p < 1.0f) floor = top_p_floor(band_mass, out.sum, top, temperature, q.top_p);
        if (q.min_p > 0.0f) floor = std::max(floor, min_p_floor(top, temperature, q.min_p));
    }
    for (size_t i = 0; i < n; ++i) {
        if (logits[i] >= floor) out.tokens.push_back({static_cast<int32_t>(i), logits[i]});
    }
}

}  // namespace strata
