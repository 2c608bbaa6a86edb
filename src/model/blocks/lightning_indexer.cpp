#include "model/blocks/lightning_indexer.h"

#include <algorithm>
#include <numeric>

#include "backend/cpu/f32_rows.h"

namespace strata {

int64_t lightning_indexer_top_k(const float* q, const float* weights, int64_t n_head, int64_t dim, const float* keys,
                                int64_t n_visible, int64_t k, float scale, int64_t* picks,
                                IndexScoreScratch& scratch) {
    const int64_t kept = std::min(k, n_visible);
    if (kept <= 0) return 0;
    std::vector<float>& scores = scratch.scores;
    std::vector<int64_t>& order = scratch.order;
    scores.resize(static_cast<size_t>(n_visible));
    for (int64_t w = 0; w < n_visible; ++w) {
        const float* key = keys + w * dim;
        float score = 0.0f;
        for (int64_t h = 0; h < n_head; ++h) {
            const float* qh = q + h * dim;
            score += std::max(dot_eight_lanes(qh, key, dim), 0.0f) * scale * weights[h];
        }
        scores[static_cast<size_t>(w)] = score;
    }
    order.resize(static_cast<size_t>(n_visible));
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + kept, order.end(), [&](int64_t a, int64_t b) {
        const float sa = scores[static_cast<size_t>(a)], sb = scores[static_cast<size_t>(b)];
        return sa > sb || (sa == sb && a < b);
    });
    std::copy_n(order.begin(), kept, picks);
    std::sort(picks, picks + kept);
    return kept;
}

}  // namespace strata
