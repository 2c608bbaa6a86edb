#include "runtime/perplexity.h"

#include <algorithm>
#include <numeric>

namespace strata {

Result<PerplexityResult> compute_perplexity(Model& model, const std::vector<int32_t>& ids, int32_t bos,
                                            const PerplexityOptions& o, ThreadPool& pool) {
    const int64_t n_vocab = model.config().n_vocab;
    const bool use_bos = bos >= 0;
    if (o.ctx < 2) return Status::error("perplexity: expected a context of at least 2 tokens, got {}", o.ctx);
    if (ids.empty()) return Status::error("perplexity: the text is empty after tokenization");
    for (int32_t t : ids) {
        if (t < 0 || t >= n_vocab) return Status::error("perplexity: token id {} is outside the vocabulary of {}", t, n_vocab);
    }
    // With BOS each window predicts all of its chunk; without, the chunk's first token is context.
    const int64_t chunk = use_bos ? o.ctx - 1 : o.ctx;
    const int64_t n = static_cast<int64_t>(ids.size());
    const int64_t n_windows = (n + chunk - 1) / chunk;
    const int64_t n_batch = std::max<int64_t>(1, o.n_batch);

    CpuContext ctx(pool, model.cpu_tuning());
    KvCache kv = model.make_kv_cache(o.ctx);
    std::vector<int32_t> positions(static_cast<size_t>(o.ctx));
    std::iota(positions.begin(), positions.end(), 0);
    std::vector<int32_t> window;
    std::vector<float> logits(static_cast<size_t>(std::min(n_batch, o.ctx) * n_vocab));
    PerplexityResult r;
    for (int64_t w = 0; w < n_windows; ++w) {
        const int64_t begin = w * chunk, end = std::min(n, begin + chunk);
        window.clear();
        if (use_bos) window.push_back(bos);
        window.insert(window.end(), ids.begin() + begin, ids.begin() + end);
        const int64_t len = static_cast<int64_t>(window.size());
        // Positions 0 .. len-2 predict the token after them; the window starts at position 0
        // each time, so the KV cache's old entries are simply overwritten.
        for (int64_t done = 0; done < len; done += n_batch) {
            const int64_t m = std::min(n_batch, len - done);
            Batch batch{window.data() + done, positions.data() + done, m, done};
            model.forward(batch, kv, logits.data(), LogitsFor::All, ctx);
            for (int64_t i = 0; i < m; ++i) {
                const int64_t pos = done + i;
                if (pos + 1 >= len) break;
                const float* row = logits.data() + i * n_vocab;
                const float mx = *std::max_element(row, row + n_vocab);
                double sum = 0.0;
                for (int64_t v = 0; v < n_vocab; ++v) sum += std::exp(double(row[v]) - double(mx));
                r.nll_sum += std::log(sum) + double(mx) - double(row[window[size_t(pos + 1)]]);
                ++r.n_scored;
            }
        }
        ++r.n_windows;
        if (o.progress) o.progress(w + 1, n_windows);
    }
    return r;
}

}  // namespace strata
