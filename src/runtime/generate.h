#pragma once
// The generation loop shared by `strata run`, `strata chat` and the server: sample, stop on
// end-of-generation tokens, stop strings or the token limit, and stream text pieces as they
// become complete UTF-8.
//
//   GenerateRequest req{.max_tokens = 128, .stop = {"\n\n"}};
//   auto result = generate(session, tokenizer, sampler, req, [](std::string_view piece) {
//       fwrite(piece.data(), 1, piece.size(), stdout);
//       return true;   // false stops (client went away)
//   });

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative.h"
#include "tokenizer/tokenizer.h"

namespace strata {

struct GenerateRequest {
    int64_t max_tokens = 256;
    std::vector<std::string> stop;  // generation ends before the first occurrence of any of these
    bool ignore_eos = false;
    // Speculative decoding (runtime/speculative.h), or null for plain decoding: the same tokens
    // (greedy, and sampled with the same seed, up to the batch's rounding of the logits), sooner
    // where drafts are accepted.
    Speculation* speculation = nullptr;
};

enum class FinishReason { Stop, Length, ContextFull, Cancelled };
std::string_view finish_reason_name(FinishReason r);

struct GenerateResult {
    std::string text;
    int64_t n_generated = 0;
    FinishReason finish = FinishReason::Stop;
    double seconds = 0.0;  // decode time
};

// Streams text pieces to `on_text` (never a partial UTF-8 character, never text that could still
// become a stop string). The session must already hold the prompt.
Result<GenerateResult> generate(Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                                const GenerateRequest& request,
                                const std::function<bool(std::string_view)>& on_text);

}  // namespace strata
