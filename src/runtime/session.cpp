#include "runtime/session.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/check.h"
#include "runtime/select_candidates.h"

namespace strata {

Session::Session(Model& model, const SessionOptions& options, ThreadPool& pool)
    : model_(model),
      options_(options),
      ctx_(pool, model.cpu_tuning()),
      kv_(model.make_kv_cache(options.n_ctx)),
      recurrent_(model.make_recurrent_state()) {
    logits_.resize(model.config().n_vocab);
    positions_.resize(static_cast<size_t>(options.n_ctx));
    std::iota(positions_.begin(), positions_.end(), 0);
}

Status Session::check_append(std::span<const int32_t> tokens) const {
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
    return Status::ok();
}

Status Session::append(std::span<const int32_t> tokens) {
    if (tokens.empty()) return Status::ok();
    STRATA_TRY(check_append(tokens));
    const int64_t n = static_cast<int64_t>(tokens.size());
    const int64_t batch_size = std::max<int64_t>(1, options_.n_batch);
    for (int64_t done = 0; done < n; done += batch_size) {
        const int64_t m = std::min(batch_size, n - done);
        const int64_t pos0 = n_past();
        Batch batch{tokens.data() + done, positions_.data() + pos0, m, pos0};
        model_.forward_with_state(batch, kv_, recurrent_, device_logits() ? nullptr : logits_.data(), LogitsFor::Last,
                                  ctx_);
        tokens_.insert(tokens_.end(), tokens.begin() + done, tokens.begin() + done + m);
    }
    logits_written(0);
    return Status::ok();
}

bool Session::device_logits() const {
    return options_.logits_on_device && model_.keeps_logits_on_device();
}

void Session::logits_written(int64_t row) {
    host_logits_ = !device_logits();
    device_row_ = DeviceLogitsRow{model_.passes(), row};
}

void Session::check_device_row() const {
    if (model_.passes() != device_row_.pass) {
        throw std::logic_error("this session's logits were left on the device and a later forward pass (another "
                               "session's) replaced them: read them (logits() or sample()) before the model's next pass");
    }
}

const float* Session::logits() const {
    if (!host_logits_) {
        check_device_row();
        model_.fetch_logits(device_row_, logits_.data());
        host_logits_ = true;
    }
    return logits_.data();
}

int32_t Session::sample(Sampler& sampler) {
    if (host_logits_) return sampler.sample(logits_.data(), n_vocab());
    check_device_row();
    model_.select_candidates(device_row_, sampler.query(n_vocab()), candidates_);
    return sampler.choose(candidates_);
}

int32_t Session::sample(Sampler& sampler, GrammarConstraint& grammar) {
    const CandidateQuery query = sampler.query(n_vocab());
    if (host_logits_) {
        select_candidates(logits_.data(), n_vocab(), query, candidates_, penalized_);
    } else {
        check_device_row();
        model_.select_candidates(device_row_, query, candidates_);
    }
    if (!constrain_candidates(candidates_, query, grammar, [this] { return logits(); })) return -1;
    return sampler.choose(candidates_);
}

Status Session::append_batched(std::span<const SessionChunk> chunks, CpuContext& ctx) {
    if (chunks.empty()) return Status::ok();
    std::vector<SequenceStep> steps;
    steps.reserve(chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
        const SessionChunk& c = chunks[i];
        STRATA_CHECK(c.session != nullptr, "a batched chunk needs its session");
        if (&c.session->model_ != &chunks[0].session->model_) {
            return Status::error("batched chunk {}: its session runs another model than chunk 0's", i);
        }
        for (size_t j = 0; j < i; ++j) {
            if (chunks[j].session == c.session) return Status::error("batched chunks {} and {} are for the same session", j, i);
        }
        if (Status s = c.session->check_append(c.tokens); !s) return Status::error("batched chunk {}: {}", i, s.message());
        if (c.tokens.empty()) continue;
        Session& s = *c.session;
        if (c.speculative) {
            s.begin_speculative(static_cast<int64_t>(c.tokens.size()));
            steps.push_back(SequenceStep{c.tokens.data(), static_cast<int64_t>(c.tokens.size()), s.n_past(), &s.kv_,
                                         &s.recurrent_, s.speculative_rows_.data(), LogitsFor::All});
            continue;
        }
        steps.push_back(SequenceStep{c.tokens.data(), static_cast<int64_t>(c.tokens.size()), s.n_past(), &s.kv_,
                                     &s.recurrent_, s.device_logits() ? nullptr : s.logits_.data(), LogitsFor::Last});
    }
    if (steps.empty()) return Status::ok();
    chunks[0].session->model_.forward_multi(steps, ctx);
    int64_t row = 0;  // the pass's rows in the steps' order: one per step, every token's for a verification
    for (const SessionChunk& c : chunks) {
        if (c.tokens.empty()) continue;
        c.session->tokens_.insert(c.session->tokens_.end(), c.tokens.begin(), c.tokens.end());
        if (c.speculative) {
            c.session->end_speculative();
            row += static_cast<int64_t>(c.tokens.size());
            continue;
        }
        c.session->logits_written(row++);
    }
    return Status::ok();
}

Status Session::append_speculative(std::span<const int32_t> tokens) {
    STRATA_TRY(check_append(tokens));
    const int64_t n = static_cast<int64_t>(tokens.size());
    STRATA_CHECK(n > 0, "a verification appends at least one token");
    begin_speculative(n);
    const int64_t pos0 = n_past();
    Batch batch{tokens.data(), positions_.data() + pos0, n, pos0};
    model_.forward_with_state(batch, kv_, recurrent_, speculative_rows_.data(), LogitsFor::All, ctx_);
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
    end_speculative();
    return Status::ok();
}

void Session::begin_speculative(int64_t n_tokens) {
    speculative_base_ = n_past();
    speculative_count_ = n_tokens;
    if (!recurrent_.empty()) speculative_snapshot_ = recurrent_.snapshot();
    speculative_rows_.resize(static_cast<size_t>(n_tokens * n_vocab()));
}

void Session::end_speculative() {
    std::memcpy(logits_.data(), speculative_logits(speculative_count_ - 1), static_cast<size_t>(n_vocab()) * sizeof(float));
    host_logits_ = true;
}

const float* Session::speculative_logits(int64_t i) const {
    STRATA_CHECK(i >= 0 && i < speculative_count_, "a row the last verification did not compute");
    return speculative_rows_.data() + i * n_vocab();
}

Status Session::rollback_speculative(int64_t keep) {
    STRATA_CHECK(speculative_base_ >= 0 && n_past() == speculative_base_ + speculative_count_,
                 "rollback_speculative without the append_speculative it undoes");
    STRATA_CHECK(keep >= 1 && keep <= speculative_count_, "a rollback keeps 1 to all of the verified tokens");
    if (keep < speculative_count_) {
        const int64_t end = speculative_base_ + keep;
        if (recurrent_.empty()) {
            tokens_.resize(static_cast<size_t>(end));
        } else {
            // Restored to before the verification, then the kept tokens again, as one batch.
            const std::vector<int32_t> kept(tokens_.begin() + speculative_base_, tokens_.begin() + end);
            tokens_.resize(static_cast<size_t>(speculative_base_));
            STRATA_TRY(recurrent_.restore(speculative_snapshot_));
            const Batch batch{kept.data(), positions_.data() + speculative_base_, keep, speculative_base_};
            model_.forward_with_state(batch, kv_, recurrent_, logits_.data(), LogitsFor::Last, ctx_);
            tokens_.insert(tokens_.end(), kept.begin(), kept.end());
        }
    }
    // The verification's own row, whatever a replay computed: the rows that decided which drafts
    // were kept also give the logits after them (a batch of another size may round differently).
    std::memcpy(logits_.data(), speculative_logits(keep - 1), static_cast<size_t>(n_vocab()) * sizeof(float));
    host_logits_ = true;
    speculative_base_ = -1;
    return Status::ok();
}

int64_t Session::reusable_prefix(int64_t n) const {
    n = std::clamp<int64_t>(n, 0, n_past());
    return (recurrent_.empty() || n == n_past()) ? n : 0;
}

RecurrentSnapshot Session::checkpoint() const {
    STRATA_CHECK(!recurrent_.empty(), "a turn checkpoint of a model without recurrent state");
    return recurrent_.snapshot();
}

Status Session::restore_checkpoint(const RecurrentSnapshot& checkpoint) {
    if (recurrent_.empty()) return Status::error("restoring a turn checkpoint: this model keeps no recurrent state");
    if (checkpoint.n_past < 0 || checkpoint.n_past > n_past()) {
        return Status::error("restoring a turn checkpoint at position {}: the session holds {} tokens", checkpoint.n_past, n_past());
    }
    STRATA_TRY(recurrent_.restore(checkpoint));
    tokens_.resize(static_cast<size_t>(checkpoint.n_past));
    return Status::ok();
}

void Session::truncate(int64_t n) {
    n = reusable_prefix(n);
    if (n >= n_past()) return;
    tokens_.resize(static_cast<size_t>(n));
    if (n == 0 && !recurrent_.empty()) recurrent_.clear();
}

}  // namespace strata
