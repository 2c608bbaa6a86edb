#include "runtime/session.h"

#include <algorithm>
#include <numeric>

namespace strata {

Session::Session(Model& model, const SessionOptions& options, ThreadPool& pool)
    : model_(model),
      options_(options),
      ctx_(pool),
      kv_(model.make_kv_cache(options.n_ctx)),
      recurrent_(model.make_recurrent_state()) {
    logits_.resize(model.config().n_vocab);
    positions_.resize(static_cast<size_t>(options.n_ctx));
    std::iota(positions_.begin(), positions_.end(), 0);
}

Status Session::append(std::span<const int32_t> tokens) {
    if (tokens.empty()) return Status::ok();
    const int64_t n = static_cast<int64_t>(tokens.size());
    if (n_past() + n > options_.n_ctx) {
        return Status::error("context full: {} tokens already in the context plus {} new ones is {} more than "
                             "the context size {} (start with a larger --ctx-size or a shorter prompt)",
                             n_past(), n, n_past() + n - options_.n_ctx, options_.n_ctx);
    }
    const int64_t n_vocab = model_.config().n_vocab;
    for (int32_t t : tokens) {
        if (t < 0 || t >= n_vocab) return Status::error("token id {} is outside the vocabulary of {} tokens", t, n_vocab);
    }
    const int64_t batch_size = std::max<int64_t>(1, options_.n_batch);
    for (int64_t done = 0; done < n; done += batch_size) {
        const int64_t m = std::min(batch_size, n - done);
        const int64_t pos0 = n_past();
        Batch batch{tokens.data() + done, positions_.data() + pos0, m, pos0};
        model_.forward_with_state(batch, kv_, recurrent_, logits_.data(), LogitsFor::Last, ctx_);
        tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + m);
    }
    return Status::ok();
}

int64_t Session::reusable_prefix(int64_t n) const {
    n = std::clamp<int64_t>(n, 0, n_past());
    return (recurrent_.empty() || n == n_past()) ? n : 0;
}

void Session::truncate(int64_t n) {
    n = reusable_prefix(n);
    if (n >= n_past()) return;
    tokens_.resize(static_cast<size_t>(n));
    if (n == 0 && !recurrent_.empty()) recurrent_.clear();
}

}  // namespace strata
