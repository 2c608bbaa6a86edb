#pragma once
// One conversation's state on a loaded model: the KV cache, the tokens seen so far and the logits
// of the last one. Prompts are processed in batches of up to n_batch tokens (the same logits as
// token by token, far faster); generation then decodes one token at a time.
//
//   Session s(*model, SessionOptions{.n_ctx = 4096}, pool);
//   STRATA_TRY(s.append(prompt_ids));                 // prefill
//   int32_t next = s.sample(sampler);                 // or sampler.sample(s.logits(), s.n_vocab())
//   STRATA_TRY(s.append({next}));                     // decode
//
// Several sessions on the same model can also advance together, in one forward pass that reads
// the weights once for all of them (continuous batching; same logits as one at a time):
//   SessionChunk chunks[] = {{&a, a_next}, {&b, b_prompt_part}};
//   STRATA_TRY(Session::append_batched(chunks, ctx));

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/status.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "runtime/grammar_sampling.h"
#include "runtime/sampler.h"

namespace strata {

class Session;

// Tokens to append to one session in Session::append_batched.
struct SessionChunk {
    Session* session = nullptr;
    std::span<const int32_t> tokens;
    // A verification (runtime/speculative.h): every token's logits kept, as append_speculative
    // keeps them, so that rollback_speculative can follow.
    bool speculative = false;
};

struct SessionOptions {
    int64_t n_ctx = 4096;    // positions the KV cache holds (prompt + generated)
    int64_t n_batch = 512;   // prompt tokens per forward pass
    // Leave the last logits on the model's device where it can (GPU models): sample() reduces
    // them there and only the candidates come back; logits() copies the row when asked. Either
    // must then be called before the model's next pass (any session's).
    bool logits_on_device = false;
};

class Session {
public:
    Session(Model& model, const SessionOptions& options, ThreadPool& pool);

    // Runs `tokens` after the ones already seen. Fails, changing nothing, when they would not fit
    // in the context or contain ids outside the vocabulary.
    Status append(std::span<const int32_t> tokens);
    // What append() checks, without running anything: the error it would return, or ok.
    Status check_append(std::span<const int32_t> tokens) const;
    // Appends every chunk to its session in ONE forward pass (Model::forward_multi), whatever
    // n_batch says: the caller sizes the chunks. The sessions must be distinct and share one
    // model; `ctx` is the pass's scratch. Fails, changing nothing, when any chunk would fail
    // append() (the message names which).
    static Status append_batched(std::span<const SessionChunk> chunks, CpuContext& ctx);
    // Forgets everything after the first n tokens (for reusing a shared prompt prefix). Models
    // with recurrent layers cannot rewind their state to an earlier position, so for them any
    // n < n_past() starts over from nothing; reusable_prefix() says how much would survive.
    void truncate(int64_t n);
    // How many of the first n tokens truncate(n) keeps: n, or 0 on a recurrent model.
    int64_t reusable_prefix(int64_t n) const;
    // Turn checkpoints (server/checkpoint_cache.h), for a model with a recurrent state: the
    // state after the n_past() tokens seen so far, in host memory...
    RecurrentSnapshot checkpoint() const;
    // ...and back to one taken of this session at a position p <= n_past() whose first p tokens
    // it still holds (so its KV rows before p are those of the same tokens): the tokens after p
    // are forgotten and the state is the checkpoint's, so appending from there gives the logits
    // of a session that never went past p. Fails, changing nothing, on a model without recurrent
    // state, a checkpoint past n_past() or one of another model's shape.
    Status restore_checkpoint(const RecurrentSnapshot& checkpoint);

    // The logits after the last appended token (copied from the device first if they are there;
    // std::logic_error when they were left there and another session's pass has replaced them).
    const float* logits() const;
    // The next token by `sampler` from those logits: reduced where they are (Model::select_candidates
    // on the device; the host's select_candidates otherwise), chosen on the host.
    int32_t sample(Sampler& sampler);
    // The same under a grammar (runtime/grammar_sampling.h): the reduction's candidates narrowed to
    // the tokens `grammar` allows (the whole vocabulary when none is); -1 when it allows none. The
    // caller accepts the token into `grammar`.
    int32_t sample(Sampler& sampler, GrammarConstraint& grammar);
    int64_t n_vocab() const { return model_.config().n_vocab; }
    int64_t n_past() const { return static_cast<int64_t>(tokens_.size()); }
    int64_t n_ctx() const { return options_.n_ctx; }
    uint64_t kv_bytes() const { return kv_.bytes(); }  // fixed at construction: safe to read from any thread
    // Whether the model keeps a recurrent state for this session (hybrid models): such a state
    // changes in place during a forward pass, so a pass that failed half-way cannot be re-run.
    bool has_recurrent_state() const { return !recurrent_.empty(); }
    const std::vector<int32_t>& tokens() const { return tokens_; }
    // The sequence's state, for checks (rows past n_past() are stale and never read).
    const KvCache& kv_cache() const { return kv_; }
    const RecurrentState& recurrent_state() const { return recurrent_; }

    // ---- speculative decoding (runtime/speculative.h) -------------------------------------------
    // Appends `tokens` (a token and the drafts after it) in ONE forward pass, whatever n_batch
    // says, keeping every token's logits on the host (speculative_logits), after saving what
    // rollback_speculative needs: the position, and on a recurrent model a snapshot of its state.
    // Fails, changing nothing, as append() does.
    Status append_speculative(std::span<const int32_t> tokens);
    // (append_batched takes verifications as chunks with `speculative` set.)
    // Row i of the last append_speculative: the logits after its token i.
    const float* speculative_logits(int64_t i) const;
    // Keeps the first `keep` (1 ≤ keep ≤ their count) of the tokens the last append_speculative
    // appended and forgets the rest, so that the session is where appending only those would have
    // left it: the KV rows past them are dropped (written again before anything reads them); a
    // recurrent state, which cannot be rewound, is restored from the snapshot and the kept tokens
    // run again in one pass; the logits are the verification's row keep - 1.
    Status rollback_speculative(int64_t keep);

private:
    bool device_logits() const;            // forward passes leave this session's logits on the device
    void check_device_row() const;         // throws std::logic_error when a later pass replaced them
    void logits_written(int64_t row);      // after a pass whose `row` is this session's

    Model& model_;
    SessionOptions options_;
    CpuContext ctx_;
    KvCache kv_;
    RecurrentState recurrent_;  // empty for attention-only models
    std::vector<int32_t> tokens_;
    std::vector<int32_t> positions_;
    mutable std::vector<float> logits_;
    mutable bool host_logits_ = true;  // logits_ holds the last row; else it is device_row_
    DeviceLogitsRow device_row_;
    void begin_speculative(int64_t n_tokens);  // saves what rollback_speculative needs
    void end_speculative();                    // the last row becomes the session's logits
    CandidateSet candidates_;          // sample()'s, reused
    // The last append_speculative: where it started, its rows, the state before it.
    int64_t speculative_base_ = -1;
    int64_t speculative_count_ = 0;
    std::vector<float> speculative_rows_;
    RecurrentSnapshot speculative_snapshot_;
    std::vector<float> penalized_;     // select_candidates' scratch under a grammar
};

}  // namespace strata
