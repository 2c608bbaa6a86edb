#include "runtime/speculative.h"

#include <algorithm>
#include <chrono>

#include "runtime/select_candidates.h"

namespace strata {

Status SpeculationOptions::validate() const {
    if (k_max < 0 || k_max > 64) return Status::error("draft max: expected 0 to 64 tokens, got {}", k_max);
    return lookup.validate();
}

void SpeculationStats::add(const SpeculationStats& o) {
    plain_steps += o.plain_steps;
    passes += o.passes;
    drafted += o.drafted;
    accepted += o.accepted;
    pass_tokens += o.pass_tokens;
    plain_seconds += o.plain_seconds;
    pass_seconds += o.pass_seconds;
}

Speculation::Speculation(const SpeculationOptions& options)
    : length_(DraftLengthOptions{.k_max = options.k_max, .adaptive = options.mode == DraftMode::Auto}) {
    if (options.mode != DraftMode::None && options.k_max > 0) drafter_ = std::make_unique<PromptLookupDrafter>(options.lookup);
}

Speculation::Speculation(const SpeculationOptions& options, std::unique_ptr<Drafter> drafter) : Speculation(options) {
    if (drafter_) drafter_ = std::move(drafter);
}

void Speculation::draft(const Session& session, int32_t next, int64_t budget, std::vector<int32_t>& out) {
    out.clear();
    if (!drafter_) return;
    const int64_t k = std::min(length_.choose(), budget);
    if (k <= 0) return;
    context_.assign(session.tokens().begin(), session.tokens().end());
    context_.push_back(next);
    drafter_->draft(context_, k, out);
    if (static_cast<int64_t>(out.size()) > k) out.resize(static_cast<size_t>(k));
}

void Speculation::record(int64_t drafted, int64_t accepted, int64_t kept_tokens, double seconds) {
    length_.record(drafted, accepted, seconds);
    if (drafted == 0) {
        ++stats_.plain_steps;
        stats_.plain_seconds += seconds;
        return;
    }
    ++stats_.passes;
    stats_.drafted += drafted;
    stats_.accepted += accepted;
    stats_.pass_tokens += kept_tokens;
    stats_.pass_seconds += seconds;
}

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

Result<bool> decode_tokens(Session& session, Sampler& sampler, Speculation* speculation, int64_t max_tokens,
                           FunctionRef<TokenVerdict(int32_t)> on_token) {
    const bool speculate = speculation != nullptr && speculation->enabled();
    std::vector<int32_t> drafts, pass;
    CandidateSet set;
    std::vector<float> scratch;
    int32_t drawn = -1;  // the token the last verification drew where it rejected a draft
    int64_t n = 0;
    while (n < max_tokens) {
        if (session.n_past() >= session.n_ctx()) return true;
        const int32_t next = drawn >= 0 ? drawn : session.sample(sampler);
        drawn = -1;
        sampler.accept(next);
        ++n;
        const TokenVerdict verdict = on_token(next);
        if (verdict == TokenVerdict::StopDropping) return false;
        const bool last = verdict == TokenVerdict::StopKeeping || n >= max_tokens;
        const auto t0 = std::chrono::steady_clock::now();
        drafts.clear();
        if (speculate && !last) {
            // The pass holds `next` and the drafts, inside the context and the token limit.
            const int64_t budget = std::min(max_tokens - n, session.n_ctx() - session.n_past() - 1);
            speculation->draft(session, next, budget, drafts);
        }
        if (drafts.empty()) {
            const int32_t one[1] = {next};
            STRATA_TRY(session.append(one));
            if (speculate) speculation->record(0, 0, 1, seconds_since(t0));
            if (last) return false;
            continue;
        }

        pass.assign(1, next);
        pass.insert(pass.end(), drafts.begin(), drafts.end());
        STRATA_TRY(session.append_speculative(pass));
        const int64_t m = static_cast<int64_t>(drafts.size());
        int64_t accepted = 0, keep = m + 1;
        bool stop = false;
        for (int64_t i = 0; i < m; ++i) {
            // Row i follows `next` and the drafts before i, all recorded in the sampler by now, so
            // the penalties see what plain decoding's would at this position; the token is drawn
            // as plain decoding draws it (one random number), and the draft kept if it is that token.
            const int32_t d = drafts[static_cast<size_t>(i)];
            select_candidates(session.speculative_logits(i), session.n_vocab(), sampler.query(session.n_vocab()), set,
                              scratch);
            const int32_t t = sampler.choose(set);
            if (t != d) {
                drawn = t;
                keep = i + 1;
                break;
            }
            ++accepted;
            sampler.accept(d);
            ++n;
            const TokenVerdict v = on_token(d);
            if (v == TokenVerdict::StopDropping || v == TokenVerdict::StopKeeping || n >= max_tokens) {
                keep = v == TokenVerdict::StopDropping ? i + 1 : i + 2;
                stop = true;
                break;
            }
        }
        STRATA_TRY(session.rollback_speculative(keep));
        speculation->record(m, accepted, keep, seconds_since(t0));
        if (stop) return false;
    }
    return false;
}

}  // namespace strata
