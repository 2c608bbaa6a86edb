#pragma once
// What proposes the tokens speculative decoding verifies (runtime/speculative.h): a drafter
// guesses up to `max` tokens that follow a context, cheaply; the model then checks them all in one
// forward pass. A drafter's guess never changes what is generated, only how fast.
//
//   PromptLookupDrafter lookup;                 // n-gram match in the prompt and the history
//   std::vector<int32_t> drafts;
//   lookup.draft(session_tokens_and_the_next, 4, drafts);
//
// Every drafter here proposes a point mass (a token, not a distribution), which the verification
// accepts exactly when the target draws that token (runtime/speculative.h). The models' own MTP
// blocks will be drafters too; one that drafts by sampling its own distribution q will need the
// general rule (accept with min(1, p/q), else draw from max(0, p - q)) beside its tokens.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace strata {

class Drafter {
public:
    virtual ~Drafter() = default;
    virtual std::string_view name() const = 0;
    // Writes 0 to `max` tokens that may follow `context` (every token of the sequence so far,
    // the prompt first) to `out`, replacing what it held.
    virtual void draft(std::span<const int32_t> context, int64_t max, std::vector<int32_t>& out) = 0;
};

// Prompt lookup: the longest suffix of the context (ngram_max down to ngram_min tokens) that
// occurred earlier in it, the latest such occurrence, and the tokens that followed it there.
// Pays where the output repeats its input (code edits, quoting, summaries); proposes nothing
// where no suffix recurs, and then costs a plain decode step. One backward scan per draft
// (O(context · ngram_max), tiny beside a forward pass).
struct PromptLookupOptions {
    int64_t ngram_min = 2;
    int64_t ngram_max = 4;
    Status validate() const;
};

class PromptLookupDrafter : public Drafter {
public:
    explicit PromptLookupDrafter(const PromptLookupOptions& options = {}) : options_(options) {}
    std::string_view name() const override { return "lookup"; }
    void draft(std::span<const int32_t> context, int64_t max, std::vector<int32_t>& out) override;

private:
    PromptLookupOptions options_;
};

}  // namespace strata
