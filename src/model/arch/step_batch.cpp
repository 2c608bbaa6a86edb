#include "model/arch/step_batch.h"

#include <algorithm>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"

namespace strata {

namespace {
// The rows of a step whose logits are wanted: [first, first + count) of the gathered batch.
struct WantedRows {
    int64_t first = 0, count = 0;
};
WantedRows wanted_rows(const SequenceStep& step, const BatchSequence& seq) {
    if (!step.logits || step.n_tokens == 0) return {};
    if (step.which == LogitsFor::Last) return {seq.first + seq.n_tokens - 1, 1};
    return {seq.first, seq.n_tokens};
}
}  // namespace

const Batch& StepBatch::gather(std::span<const SequenceStep> steps, MoeExpertSource* expert_source) {
    steps_ = steps;
    tokens_.clear();
    positions_.clear();
    sequences_.clear();
    for (const SequenceStep& s : steps) {
        STRATA_CHECK(s.kv != nullptr && s.n_tokens >= 0, "a sequence step needs a KV cache");
        STRATA_CHECK(s.pos0 >= 0 && s.pos0 + s.n_tokens <= s.kv->n_ctx(), "batch runs past the KV cache");
        const int64_t first = static_cast<int64_t>(tokens_.size());
        tokens_.insert(tokens_.end(), s.tokens, s.tokens + s.n_tokens);
        for (int64_t t = 0; t < s.n_tokens; ++t) positions_.push_back(static_cast<int32_t>(s.pos0 + t));
        sequences_.push_back(BatchSequence{first, s.n_tokens, s.pos0, s.kv, s.state});
    }
    batch_ = Batch{tokens_.data(), positions_.data(), static_cast<int64_t>(tokens_.size()),
                   steps.size() == 1 ? steps[0].pos0 : 0, expert_source, sequences_};
    return batch_;
}

void StepBatch::write_logits(const float* x, const Weight& output_norm, const Weight& output, const ModelConfig& cfg,
                             int normed_slot, CpuContext& ctx) {
    // One pointer captured: the std::function keeps it without allocating (decode steps allocate nothing).
    struct Norm {
        const Weight& weight;
        const ModelConfig& cfg;
        CpuContext& ctx;
    } norm{output_norm, cfg, ctx};
    const HeadInput final_norm = [&norm](const float* rows, int64_t count, float* out) {
        cpu_rms_norm(rows, norm.weight.f32(), count, norm.cfg.n_embd, norm.cfg.rms_eps, out, norm.ctx);
    };
    write_logits(x, cfg.n_embd, final_norm, output, cfg, normed_slot, ctx);
}

void StepBatch::write_logits(const float* x, int64_t row_floats, const HeadInput& head_input, const Weight& output,
                             const ModelConfig& cfg, int normed_slot, CpuContext& ctx) {
    const int64_t e = cfg.n_embd, n_vocab = cfg.n_vocab;
    int64_t rows = 0;
    for (size_t i = 0; i < steps_.size(); ++i) rows += wanted_rows(steps_[i], sequences_[i]).count;
    if (rows == 0) return;
    // Each step's wanted rows, normalized, one after the other: the output head then reads its
    // (often largest) matrix once for all of them.
    float* normed = ctx.scratch_floats(normed_slot, static_cast<size_t>(rows * e));
    int64_t at = 0;
    for (size_t i = 0; i < steps_.size(); ++i) {
        const WantedRows w = wanted_rows(steps_[i], sequences_[i]);
        head_input(x + w.first * row_floats, w.count, normed + at * e);
        at += w.count;
    }
    if (steps_.size() == 1) {
        cpu_matmul(output, 0, normed, rows, steps_[0].logits, ctx);
        return;
    }
    logits_.resize(static_cast<size_t>(rows * n_vocab));
    cpu_matmul(output, 0, normed, rows, logits_.data(), ctx);
    at = 0;
    for (size_t i = 0; i < steps_.size(); ++i) {
        const WantedRows w = wanted_rows(steps_[i], sequences_[i]);
        std::copy_n(logits_.data() + at * n_vocab, w.count * n_vocab, steps_[i].logits);
        at += w.count;
    }
}

}  // namespace strata
