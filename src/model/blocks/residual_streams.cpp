#include "model/blocks/residual_streams.h"

#include <algorithm>

namespace strata {

float* start_residual_streams(const float* embedded, int64_t n_tokens, int64_t n_embd, int64_t hc, std::vector<float>& streams) {
    streams.resize(static_cast<size_t>(n_tokens * hc * n_embd));
    float* R = streams.data();
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t s = 0; s < hc; ++s) std::copy_n(embedded + t * n_embd, n_embd, R + (t * hc + s) * n_embd);
    }
    return R;
}

}  // namespace strata
