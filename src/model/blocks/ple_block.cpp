// The PLE block (ple_block.h), after HF transformers' Qwen4ExpTextNGramEmbedding.forward and
// Qwen4ExpTextPLELayer.forward / _short_conv, in their order of float operations.
#include "model/blocks/ple_block.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/check.h"
#include "model/ple_table.h"

namespace strata {

namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

int64_t conv_history_rows(const PleConfig& ple) { return int64_t{ple.conv_kernel - 1} * ple.ngram_size; }

// The block's working rows, kept per thread from call to call.
struct PleScratch {
    std::vector<int32_t> rows;
    std::vector<float> embedded, key, value, query, gated, normed, window;
};

PleScratch& ple_scratch() {
    thread_local PleScratch scratch;
    return scratch;
}

// out[t] = Σ_k w[c][k] · in[t - (kernel-1-k)·dilation] per channel, over [history ; rows] (history:
// the last (kernel-1)·dilation rows before this batch, oldest first), which is then advanced.
// HF runs nn.Conv1d(groups=channels, dilation) over the left-padded rows: the same sum in tap order.
void dilated_causal_conv(const float* rows, int64_t n, int64_t channels, const float* weight, int64_t kernel,
                         int64_t dilation, float* history, std::vector<float>& window, float* out) {
    const int64_t past = (kernel - 1) * dilation;
    window.resize(static_cast<size_t>((past + n) * channels));
    std::copy_n(history, past * channels, window.begin());
    std::copy_n(rows, n * channels, window.begin() + past * channels);
    for (int64_t t = 0; t < n; ++t) {
        float* o = out + t * channels;
        for (int64_t c = 0; c < channels; ++c) {
            float sum = 0.0f;
            for (int64_t k = 0; k < kernel; ++k) sum += weight[c * kernel + k] * window[static_cast<size_t>((t + k * dilation) * channels + c)];
            o[c] = sum;
        }
    }
    std::copy_n(window.end() - past * channels, past * channels, history);
}

}  // namespace

int64_t ple_history_floats(const ModelConfig& cfg) {
    return conv_history_rows(cfg.ple) * int64_t{cfg.hc_count} * cfg.n_embd;
}

int64_t ple_history_tokens(const ModelConfig& cfg) { return cfg.ple.ngram_size - 1; }

void ple_table_rows(const PleConfig& ple, const int32_t* tokens, int64_t n, int32_t* history, int32_t* rows) {
    const int64_t context = ple.ngram_size - 1, n_heads = ple.n_heads();
    const int32_t eos = ple.eos_token;
    thread_local std::vector<int32_t> seq;  // kept from call to call: a decode step allocates nothing
    thread_local std::vector<uint64_t> ctx;
    seq.resize(static_cast<size_t>(context + n));
    ctx.resize(static_cast<size_t>(ple.ngram_size));
    std::copy_n(history, context, seq.begin());
    std::copy_n(tokens, n, seq.begin() + context);
    for (int64_t t = 0; t < n; ++t) {
        const int64_t at = context + t;
        // ctx_s: the token s back, unless an EOS sits between it and this token (the EOS itself
        // included, this token excluded): then EOS. HF: _shift_right_ignore_eos.
        ctx[0] = static_cast<uint64_t>(seq[static_cast<size_t>(at)]);
        bool cut = false;
        for (int64_t s = 1; s <= context; ++s) {
            cut = cut || seq[static_cast<size_t>(at - s)] == eos;
            ctx[static_cast<size_t>(s)] = static_cast<uint64_t>(cut ? eos : seq[static_cast<size_t>(at - s)]);
        }
        for (uint32_t len = 2; len <= ple.ngram_size; ++len) {
            uint64_t mixed = ctx[0] * ple.multipliers[0];
            for (uint32_t k = 1; k < len; ++k) mixed ^= ctx[k] * ple.multipliers[k];
            for (uint32_t g = 0; g < ple.heads_per_ngram; ++g) {
                const size_t h = (len - 2) * ple.heads_per_ngram + g;
                rows[t * n_heads + static_cast<int64_t>(h)] =
                    static_cast<int32_t>(mixed % ple.head_sizes[h] + ple.head_offsets[h]);
            }
        }
    }
    std::copy(seq.end() - context, seq.end(), history);
}

void ple_block(const PleWeights& w, PleTable& table, const ModelConfig& cfg, float* R, const Batch& batch,
               int64_t layer, CpuContext& ctx) {
    const PleConfig& ple = cfg.ple;
    const int64_t n = batch.n_tokens, e = cfg.n_embd, hc = cfg.hc_count, wide = hc * e;
    const int64_t n_heads = ple.n_heads(), width = n_heads * ple.row_width;
    PleScratch& s = ple_scratch();

    s.rows.resize(static_cast<size_t>(n * n_heads));
    for (const BatchSequence& seq : batch.sequences) {
        STRATA_CHECK(seq.state && seq.state->has_history(layer), "the PLE block needs its history in the recurrent state");
        ple_table_rows(ple, batch.tokens + seq.first, seq.n_tokens, seq.state->history_tokens(layer),
                       s.rows.data() + seq.first * n_heads);
    }
    s.embedded.resize(static_cast<size_t>(n * width));
    table.get_rows(s.rows.data(), n * n_heads, s.embedded.data(), &ctx.pool());

    s.key.resize(static_cast<size_t>(n * wide));
    s.value.resize(static_cast<size_t>(n * e));
    s.query.resize(static_cast<size_t>(n * wide));
    cpu_matmul(w.key, 0, s.embedded.data(), n, s.key.data(), ctx);
    cpu_matmul(w.value, 0, s.embedded.data(), n, s.value.data(), ctx);
    cpu_grouped_rms_norm(s.key.data(), w.norm_key.f32(), n, hc, e, cfg.rms_eps, s.key.data(), ctx);
    cpu_grouped_rms_norm(R, w.norm_query.f32(), n, hc, e, cfg.rms_eps, s.query.data(), ctx);

    // u_s = σ(signed sqrt of the stream's key · query) · v
    s.gated.resize(static_cast<size_t>(n * wide));
    const float inv_sqrt_e = 1.0f / std::sqrt(static_cast<float>(e));
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t st = 0; st < hc; ++st) {
            const float* k = s.key.data() + t * wide + st * e;
            const float* q = s.query.data() + t * wide + st * e;
            float dot = 0.0f;
            for (int64_t i = 0; i < e; ++i) dot += k[i] * q[i];
            float g = dot * inv_sqrt_e;
            g = (g > 0.0f ? 1.0f : g < 0.0f ? -1.0f : 0.0f) * std::sqrt(std::max(std::fabs(g), 1e-6f));
            const float scale = sigmoid(g);
            float* u = s.gated.data() + t * wide + st * e;
            for (int64_t i = 0; i < e; ++i) u[i] = scale * s.value[static_cast<size_t>(t * e + i)];
        }
    }
    s.normed.resize(static_cast<size_t>(n * wide));
    cpu_grouped_rms_norm(s.gated.data(), w.norm_conv.f32(), n, hc, e, cfg.rms_eps, s.normed.data(), ctx);

    // R += u + silu(conv(normed)), each sequence's convolution over its own history.
    std::vector<float>& conv = s.key;  // the keys are spent
    for (const BatchSequence& seq : batch.sequences) {
        dilated_causal_conv(s.normed.data() + seq.first * wide, seq.n_tokens, wide, w.conv.f32(), ple.conv_kernel,
                            ple.ngram_size, seq.state->history(layer), s.window, conv.data() + seq.first * wide);
    }
    for (int64_t i = 0; i < n * wide; ++i) {
        const float c = conv[static_cast<size_t>(i)];
        R[i] += s.gated[static_cast<size_t>(i)] + c * sigmoid(c);
    }
}

}  // namespace strata
