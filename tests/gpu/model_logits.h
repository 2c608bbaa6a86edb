#pragma once
// The logits of every position of `tokens` from a fresh KV cache: as one prompt batch, or token by
// token (decode), for GPU tests that compare two models or two paths of one.
//
//   std::vector<float> batch = test::model_logits(*model, tokens, false, cpu);

#include <cstdint>
#include <numeric>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "model/model.h"

namespace strata::test {

inline std::vector<float> model_logits(Model& m, const std::vector<int32_t>& tokens, bool one_by_one, CpuContext& cpu) {
    const int64_t n = static_cast<int64_t>(tokens.size()), vocab = m.config().n_vocab;
    std::vector<int32_t> positions(tokens.size());
    std::iota(positions.begin(), positions.end(), 0);
    KvCache kv = m.make_kv_cache(n);
    std::vector<float> out(static_cast<size_t>(n * vocab));
    if (!one_by_one) {
        m.forward(Batch{tokens.data(), positions.data(), n, 0}, kv, out.data(), LogitsFor::All, cpu);
        return out;
    }
    for (int64_t i = 0; i < n; ++i) {
        // pos0 = i: the token sees the cache of every earlier one (0 would overwrite position 0).
        m.forward(Batch{tokens.data() + i, positions.data() + i, 1, i}, kv, out.data() + i * vocab, LogitsFor::All, cpu);
    }
    return out;
}

}  // namespace strata::test
