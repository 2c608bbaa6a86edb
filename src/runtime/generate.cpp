#include "runtime/generate.h"

#include <chrono>

#include "runtime/text_stream.h"

namespace strata {

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
    StopStringStreamer stream(request.stop);
    const auto start = std::chrono::steady_clock::now();
    for (int32_t t : session.tokens()) sampler.accept(t);
    result.finish = FinishReason::Length;
    auto decoded = decode_tokens(session, sampler, request.speculation, request.max_tokens, [&](int32_t next) {
        ++result.n_generated;
        const bool end_token = next == tokenizer.eos_id() || next == tokenizer.eot_id();
        if (end_token && !request.ignore_eos) {
            result.finish = FinishReason::Stop;
            return TokenVerdict::StopDropping;
        }
        const std::string ready = stream.push(tokenizer.token_to_piece(next, /*render_special=*/false));
        if (!ready.empty() && !on_text(ready)) {
            result.finish = FinishReason::Cancelled;
            return TokenVerdict::StopDropping;
        }
        if (stream.stopped()) {
            result.finish = FinishReason::Stop;
            return TokenVerdict::StopDropping;
        }
        return TokenVerdict::Continue;
    });
    if (!decoded) return decoded.status();
    if (*decoded) result.finish = FinishReason::ContextFull;
    if (result.finish != FinishReason::Cancelled) {
        const std::string rest = stream.finish();
        if (!rest.empty()) on_text(rest);
    }
    result.text = stream.text();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace strata
