#pragma once
// One conversation's state on a loaded model: the KV cache, the tokens seen so far and the logits
// of the last one. Prompts are processed in batches of up to n_batch tokens (the same logits as
// token by token, far faster); generation then decodes one token at a time.
//
//   Session s(*model, SessionOptions{.n_ctx = 4096}, pool);
//   STRATA_TRY(s.append(prompt_ids));                 // prefill
//   int32_t next = sampler.sample(s.logits(), s.n_vocab());
//   STRATA_TRY(s.append({next}));                     // decode

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/status.h"
#include "kv/kv_cache.h"
#include "model/model.h"

namespace strata {

struct SessionOptions {
    int64_t n_ctx = 4096;    // positions the KV cache holds (prompt + generated)
    int64_t n_batch = 512;   // prompt tokens per forward pass
};

class Session {
public:
    Session(Model& model, const SessionOptions& options, ThreadPool& pool);

    // Runs `tokens` after the ones already seen. Fails, changing nothing, when they would not fit
    // in the context or contain ids outside the vocabulary.
    Status append(std::span<const int32_t> tokens);
    // Forgets everything after the first n tokens (for reusing a shared prompt prefix). Models
    // with recurrent layers cannot rewind their state to an earlier position, so for them any
    // n < n_past() starts over from nothing; reusable_prefix() says how much would survive.
    void truncate(int64_t n);
    // How many of the first n tokens truncate(n) keeps: n, or 0 on a recurrent model.
    int64_t reusable_prefix(int64_t n) const;

    const float* logits() const { return logits_.data(); }  // after the last appended token
    int64_t n_vocab() const { return model_.config().n_vocab; }
    int64_t n_past() const { return static_cast<int64_t>(tokens_.size()); }
    int64_t n_ctx() const { return options_.n_ctx; }
    const std::vector<int32_t>& tokens() const { return tokens_; }

private:
    Model& model_;
    SessionOptions options_;
    CpuContext ctx_;
    KvCache kv_;
    RecurrentState recurrent_;  // empty for attention-only models
    std::vector<int32_t> tokens_;
    std::vector<int32_t> positions_;
    std::vector<float> logits_;
};

}  // namespace strata
