#include "runtime/drafter.h"

#include <algorithm>

namespace strata {

Status PromptLookupOptions::validate() const {
    if (ngram_min < 1 || ngram_max < ngram_min || ngram_max > 64) {
        return Status::error("prompt lookup n-gram sizes: expected 1 <= min <= max <= 64, got min {} and max {}", ngram_min,
                             ngram_max);
    }
    return Status::ok();
}

void PromptLookupDrafter::draft(std::span<const int32_t> context, int64_t max, std::vector<int32_t>& out) {
    out.clear();
    const int64_t n = static_cast<int64_t>(context.size());
    if (max <= 0) return;
    // Longer matches first: they predict better than a short one that recurs more often.
    for (int64_t g = std::min(options_.ngram_max, n - 1); g >= options_.ngram_min; --g) {
        const auto suffix = context.subspan(static_cast<size_t>(n - g));
        // The latest earlier occurrence (start < n - g) that is followed by at least one token.
        for (int64_t start = n - g - 1; start >= 0; --start) {
            if (!std::equal(suffix.begin(), suffix.end(), context.begin() + start)) continue;
            const int64_t from = start + g;
            const int64_t take = std::min(max, n - from);
            out.assign(context.begin() + from, context.begin() + from + take);
            return;
        }
    }
}

}  // namespace strata
