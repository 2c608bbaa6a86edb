#pragma once
// The working rows of a sparse-attention indexer choosing the best-scored entries for one query
// (qwen4exp's QSA blocks, DeepSeek-V4's lightning indexer): a score per visible entry and their
// ranking order. Kept per thread by the caller and reserved once for the most entries a query of
// its cache can see, so that the token loop allocates nothing as the context grows.
//
//   thread_local IndexScoreScratch scratch;
//   scratch.reserve(n_ctx / ratio);

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata {

struct IndexScoreScratch {
    std::vector<float> scores;
    std::vector<int64_t> order;
    void reserve(int64_t max_entries) {
        scores.reserve(static_cast<size_t>(max_entries));
        order.reserve(static_cast<size_t>(max_entries));
    }
};

}  // namespace strata
