#include "cli/profile_run.h"

#include <algorithm>
#include <numeric>

namespace strata::cli {

namespace {

int32_t argmax(const float* logits, int64_t n) {
    return static_cast<int32_t>(std::max_element(logits, logits + n) - logits);
}

}  // namespace

Result<ProfileRunTotals> run_profile_prompts(const Engine& lm, const std::vector<ProfilePrompt>& prompts,
                                             MoeExpertSource& source, const ProfileRunOptions& o, CpuContext& ctx,
                                             const ProfileProgress& progress) {
    Model& model = *lm.model;
    const Tokenizer& tok = *lm.tokenizer;
    const int64_t n_vocab = model.config().n_vocab;
    if (o.n_ctx < 2 + o.n_generate)
        return Status::error("--ctx {} leaves no room for a prompt and {} generated tokens", o.n_ctx, o.n_generate);
    // Room for the prompt: what the context keeps after the generated tokens, and at most the cap.
    int64_t prompt_room = o.n_ctx - o.n_generate;
    if (o.max_prompt_tokens > 0) prompt_room = std::min(prompt_room, o.max_prompt_tokens);

    // One cache for all prompts: each starts at position 0 and attention reads only positions
    // the current prompt wrote, so earlier prompts' rows are never seen.
    KvCache kv = model.make_kv_cache(o.n_ctx);
    std::vector<int32_t> positions(static_cast<size_t>(o.n_ctx));
    std::iota(positions.begin(), positions.end(), 0);
    std::vector<float> logits(static_cast<size_t>(n_vocab));
    ProfileRunTotals totals;

    for (const ProfilePrompt& prompt : prompts) {
        for (int32_t id : prompt.tokens)
            if (id < 0 || id >= n_vocab)
                return Status::error("prompt on line {}: token id {} is outside the vocabulary ({})", prompt.line, id,
                                     n_vocab);
        // A fresh recurrent state per prompt (hybrid models); attention-only models get an empty one.
        RecurrentState state = model.make_recurrent_state();
        const int64_t n_prompt = std::min<int64_t>(static_cast<int64_t>(prompt.tokens.size()), prompt_room);
        totals.truncated_prompts += n_prompt < static_cast<int64_t>(prompt.tokens.size());
        auto step = [&](const int32_t* tokens, int64_t n, int64_t pos0) {
            const Batch batch{tokens, positions.data() + pos0, n, pos0, &source};
            model.forward_with_state(batch, kv, state, logits.data(), LogitsFor::Last, ctx);
            totals.tokens += static_cast<uint64_t>(n);
        };
        for (int64_t pos = 0; pos < n_prompt; pos += o.n_batch) {
            step(prompt.tokens.data() + pos, std::min(o.n_batch, n_prompt - pos), pos);
            if (progress && !progress(totals)) return totals;
        }
        int64_t pos = n_prompt;
        for (int64_t g = 0; g < o.n_generate; ++g) {
            const int32_t next = argmax(logits.data(), n_vocab);
            if (next == tok.eos_id() || next == tok.eot_id()) break;
            step(&next, 1, pos++);
            ++totals.generated_tokens;
            if (progress && !progress(totals)) return totals;
        }
        ++totals.prompts;
        if (progress && !progress(totals)) return totals;
    }
    return totals;
}

}  // namespace strata::cli
