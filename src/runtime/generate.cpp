#include "runtime/generate.h"

#include <algorithm>
#include <chrono>

namespace strata {

namespace {
// Length of the longest prefix of valid complete UTF-8 characters in s (an incomplete trailing
// sequence is held back until its remaining bytes arrive).
size_t complete_utf8_prefix(std::string_view s) {
    size_t i = s.size();
    size_t back = 0;
    while (i > 0 && back < 4) {
        unsigned char c = static_cast<unsigned char>(s[i - 1]);
        if ((c & 0xC0) != 0x80) {
            size_t need = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
            return (back + 1 >= need) ? s.size() : i - 1;
        }
        --i;
        ++back;
    }
    return s.size();
}

// How many trailing bytes of text could be the start of a stop string (held back from the stream).
size_t stop_prefix_overlap(std::string_view text, const std::vector<std::string>& stops) {
    size_t hold = 0;
    for (const auto& s : stops) {
        for (size_t k = std::min(s.size() - 1, text.size()); k > hold; --k) {
            if (text.substr(text.size() - k) == std::string_view(s).substr(0, k)) {
                hold = k;
                break;
            }
        }
    }
    return hold;
}
}  // namespace

std::string_view finish_reason_name(FinishReason r) {
    switch (r) {
        case FinishReason::Stop: return "stop";
        case FinishReason::Length: return "length";
        case FinishReason::ContextFull: return "length";
        case FinishReason::Cancelled: return "cancelled";
    }
    return "stop";
}

Result<GenerateResult> generate(Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                                const GenerateRequest& request,
                                const std::function<bool(std::string_view)>& on_text) {
    for (const auto& s : request.stop) {
        if (s.empty()) return Status::error("stop strings must not be empty");
    }
    GenerateResult result;
    size_t emitted = 0;  // bytes of result.text already streamed
    const auto start = std::chrono::steady_clock::now();
    for (int32_t t : session.tokens()) sampler.accept(t);
    result.finish = FinishReason::Length;
    while (result.n_generated < request.max_tokens) {
        if (session.n_past() >= session.n_ctx()) {
            result.finish = FinishReason::ContextFull;
            break;
        }
        const int32_t next = sampler.sample(session.logits(), session.n_vocab());
        sampler.accept(next);
        ++result.n_generated;
        const bool end_token = next == tokenizer.eos_id() || next == tokenizer.eot_id();
        if (end_token && !request.ignore_eos) {
            result.finish = FinishReason::Stop;
            break;
        }
        result.text += tokenizer.token_to_piece(next, /*render_special=*/false);

        // Stop strings: cut the text at the first match and end.
        bool stopped = false;
        for (const auto& s : request.stop) {
            size_t from = emitted > s.size() ? emitted - s.size() : 0;
            size_t at = result.text.find(s, from);
            if (at != std::string::npos) {
                result.text.resize(at);
                stopped = true;
            }
        }
        size_t ready = stopped ? result.text.size()
                               : complete_utf8_prefix(result.text) - std::min(complete_utf8_prefix(result.text),
                                                                            stop_prefix_overlap(result.text, request.stop));
        if (ready > emitted) {
            if (!on_text(std::string_view(result.text).substr(emitted, ready - emitted))) {
                result.finish = FinishReason::Cancelled;
                break;
            }
            emitted = ready;
        }
        if (stopped) {
            result.finish = FinishReason::Stop;
            break;
        }
        const int32_t one[1] = {next};
        STRATA_TRY(session.append(one));
    }
    if (emitted < result.text.size() && result.finish != FinishReason::Cancelled) {
        on_text(std::string_view(result.text).substr(emitted));
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace strata
