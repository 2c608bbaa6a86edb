#pragma once
// Speculative decoding: a drafter (runtime/drafter.h) guesses the next few tokens, the model
// checks them all in ONE forward pass (the token sampled last and the drafts, through the model's
// ordinary batch path: on a tiered model the pass goes through the expert tiers like any batch),
// and every draft the target would have produced is kept. The output's distribution is exactly
// plain decoding's:
// - the target distribution of a position is the sampler's (Sampler::choose): penalties from the
//   history including the tokens accepted before it, then temperature, top-k, min-p, top-p,
//   renormalized; greedy (temperature 0) is its arg-max, a point mass;
// - each position's token is drawn from that distribution with the sampler's random numbers, one
//   per position in order, exactly as plain decoding draws it (Sampler::choose on the position's
//   row of the verification); a draft is kept when it is that token, and at the first that is
//   not, the drawn token takes its place and the rest are dropped. For a drafter whose q is a
//   point mass on x this is the standard rejection rule: x is accepted with probability
//   min(1, p(x)/q(x)) = p(x), and on a rejection the token is distributed as p given "not x",
//   the renormalized residual max(0, p − q). Because it spends the random numbers as plain
//   decoding does, a seed gives the same text with and without speculation (up to the batch's
//   rounding of the logits), whatever k the draft length chose;
// - greedy accepts while the arg-max equals the draft, so it yields plain decoding's tokens.
// After the acceptance tests the session is rolled back to the last kept token
// (Session::rollback_speculative): KV rows dropped, a recurrent state restored and replayed.
//
//   Speculation spec(SpeculationOptions{.mode = DraftMode::Auto, .k_max = 4});
//   decode_tokens(session, sampler, &spec, 128, [&](int32_t t) { ...; return TokenVerdict::Continue; });
//   spec.stats();   // drafted, accepted, passes, seconds

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/function_ref.h"
#include "core/status.h"
#include "runtime/draft_length.h"
#include "runtime/draft_mode.h"
#include "runtime/drafter.h"
#include "runtime/sampler.h"
#include "runtime/session.h"

namespace strata {

struct SpeculationOptions {
    DraftMode mode = DraftMode::Auto;
    int64_t k_max = 4;
    PromptLookupOptions lookup = {};
    Status validate() const;
};

struct SpeculationStats {
    int64_t plain_steps = 0;     // decode steps without drafts
    int64_t passes = 0;          // verification passes (a token and 1 or more drafts)
    int64_t drafted = 0;         // drafts verified
    int64_t accepted = 0;        // drafts that passed their test
    int64_t pass_tokens = 0;     // tokens the verification passes yielded (the sampled one and accepted drafts)
    double plain_seconds = 0.0;
    double pass_seconds = 0.0;   // verification passes with their rollbacks
    double acceptance() const { return drafted > 0 ? static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0; }
    double tokens_per_pass() const { return passes > 0 ? static_cast<double>(pass_tokens) / static_cast<double>(passes) : 0.0; }
    void add(const SpeculationStats& o);
};

// One sequence's speculation: its drafter, its draft length, its counts.
class Speculation {
public:
    explicit Speculation(const SpeculationOptions& options);
    // With a drafter of the caller's (a model's MTP block; tests' scripted drafts) instead of
    // prompt lookup; options.mode None still turns speculation off.
    Speculation(const SpeculationOptions& options, std::unique_ptr<Drafter> drafter);
    bool enabled() const { return drafter_ != nullptr; }
    // The drafts to verify after `next` (which follows the session's tokens), at most `budget`.
    void draft(const Session& session, int32_t next, int64_t budget, std::vector<int32_t>& out);
    void record(int64_t drafted, int64_t accepted, int64_t kept_tokens, double seconds);
    const SpeculationStats& stats() const { return stats_; }
    const DraftLength& length() const { return length_; }

private:
    std::unique_ptr<Drafter> drafter_;
    DraftLength length_;
    SpeculationStats stats_;
    std::vector<int32_t> context_;  // draft()'s, reused
};

// What a new token does to the generation: go on; stop after it (it stays in the session, as
// when the token limit is reached); or stop without it (an end token, a stop string, a client
// gone: the session holds what came before, as plain decoding leaves it).
enum class TokenVerdict { Continue, StopKeeping, StopDropping };

// The decoding loop without text: up to max_tokens tokens, sampled (and recorded in `sampler`)
// one after the other, each handed to `on_token` in order; speculative when `speculation` is
// non-null and enabled. The session must hold the prompt and its logits. Returns true when it
// stopped because the context is full.
Result<bool> decode_tokens(Session& session, Sampler& sampler, Speculation* speculation, int64_t max_tokens,
                           FunctionRef<TokenVerdict(int32_t)> on_token);

}  // namespace strata
