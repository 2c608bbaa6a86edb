// The GPU ops qwen4exp adds (gpu_ops_qwen4exp.h) vs their CPU references; see op_parity.h for the
// method. The hyper-connection mixer runs as gpu_qwen4exp.cpp queues it and is compared with
// hyper_connection_mix / _combine (model/blocks/hyper_connection.cpp); QSA's index keys, block
// selection and attention over the selection with the pooling and scoring loops of
// model/blocks/qsa_indexer.cpp (repeated here as they are written there), its qsa_query_ranges and
// cpu_attention over the ranges; the PLE gate and dilated convolution with the loops of
// model/blocks/ple_block.cpp (repeated here), a prompt and then one-token steps that must continue
// from the history it left. Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "backend/cpu/attention.h"
#include "backend/cpu/ops.h"
#include "core/thread_pool.h"
#include "model/blocks/hyper_connection.h"
#include "model/blocks/qsa_indexer.h"
#if STRATA_HAS_GPU
#include "backend/gpu/gpu_ops_qwen4exp.h"
#endif

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

float host_sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

class GpuQwen4ExpOps : public GpuOpTest {
protected:
    std::mt19937 rng_{23};
    ThreadPool threads_{ThreadPool::Options{.threads = 2}};
    CpuContext cpu_{threads_};
};

// ---- hyper-connections ------------------------------------------------------------------------

struct HcShape {
    const char* name;
    int64_t hc, e, rank;
};
constexpr HcShape kHcShapes[] = {
    {"flash", 4, 2560, 320},  // Qwen3.8-Flash-Next's
    {"tiny", 4, 64, 16},
    {"odd", 3, 40, 24},  // rows that are no multiple of a warp or a q8 block (float rows: multiples of 8)
};

TEST_F(GpuQwen4ExpOps, HyperConnectionMixAndCombine) {
    for (const HcShape& s : kHcShapes) {
        ModelConfig cfg;
        cfg.n_embd = static_cast<uint32_t>(s.e);
        cfg.hc_count = static_cast<uint32_t>(s.hc);
        cfg.hc_lowrank = static_cast<uint32_t>(s.rank);
        cfg.rms_eps = 1e-6f;
        const int64_t wide = s.hc * s.e;
        const HostWeight down = make_weight(TensorType::F32, wide, s.rank, 1, rng_);
        const HostWeight up = make_weight(TensorType::F32, s.rank, wide, 1, rng_);
        const HostWeight inject = make_weight(TensorType::F32, wide, s.hc, 1, rng_);
        std::vector<float> norm = random_floats(rng_, static_cast<size_t>(wide), 0.5f);
        for (float& v : norm) v += 1.0f;  // as the converter's 1 + w
        Weight norm_view;
        norm_view.data = reinterpret_cast<const uint8_t*>(norm.data());
        norm_view.type = TensorType::F32;
        norm_view.ne[0] = wide;
        norm_view.row_bytes = static_cast<uint64_t>(wide) * sizeof(float);
        const HyperConnectionWeights w{norm_view, down.view, up.view, inject.view};
        const gpu::DeviceWeight d_down = to_device(down), d_up = to_device(up), d_inject = to_device(inject);
        const float* d_norm = to_device(norm);

        for (int64_t n : {int64_t{1}, int64_t{5}, int64_t{37}}) {
            const std::string name = fmt::format("{} (hc {} n_embd {} rank {}) n={}", s.name, s.hc, s.e, s.rank, n);
            const std::vector<float> embedding = random_floats(rng_, static_cast<size_t>(n * s.e));
            // The streams as a few blocks leave them: the embedding plus a different part each.
            std::vector<float> R(static_cast<size_t>(n * wide));
            for (int64_t t = 0; t < n; ++t) {
                for (int64_t st = 0; st < s.hc; ++st) {
                    for (int64_t i = 0; i < s.e; ++i) R[static_cast<size_t>((t * s.hc + st) * s.e + i)] = embedding[static_cast<size_t>(t * s.e + i)];
                }
            }
            float* d_R = device_zeros<float>(R.size());
            gpu::gpu_hc_broadcast(to_device(embedding), n, s.hc, s.e, d_R, ctx());
            EXPECT_NMSE("hc_broadcast " + name, from_device(d_R, R.size()), R, 0.0);
            const std::vector<float> drift = random_floats(rng_, R.size(), 0.3f);
            for (size_t i = 0; i < R.size(); ++i) R[i] += drift[i];
            d_R = to_device(R);

            std::vector<float> want_x(static_cast<size_t>(n * s.e)), want_a(static_cast<size_t>(n * s.hc));
            hyper_connection_mix(w, cfg, R.data(), n, want_x.data(), want_a.data(), cpu_);

            float* normed = device_zeros<float>(static_cast<size_t>(n * wide));
            float* low = device_zeros<float>(static_cast<size_t>(n * s.rank));
            float* mix = device_zeros<float>(static_cast<size_t>(n * wide));
            float* x = device_zeros<float>(want_x.size());
            float* a = device_zeros<float>(want_a.size());
            gpu::gpu_grouped_rms_norm(d_R, d_norm, n, s.hc, s.e, cfg.rms_eps, normed, ctx());
            std::vector<float> want_normed(static_cast<size_t>(n * wide));
            cpu_grouped_rms_norm(R.data(), norm.data(), n, s.hc, s.e, cfg.rms_eps, want_normed.data(), cpu_);
            EXPECT_NMSE("grouped_rms_norm " + name, from_device(normed, want_normed.size()), want_normed, 1e-12);
            gpu::gpu_matmul(d_down, 0, normed, n, low, ctx());
            gpu::gpu_hc_low_activation(low, n * s.rank, s.hc, ctx());
            gpu::gpu_matmul(d_up, 0, low, n, mix, ctx());
            gpu::gpu_hc_mix_streams(mix, normed, n, s.hc, s.e, x, ctx());
            gpu::gpu_matmul(d_inject, 0, normed, n, a, ctx());
            gpu::gpu_hc_inject_weights(a, n * s.hc, s.hc, ctx());
            // f32 weights: the same products, summed in another order.
            EXPECT_NMSE("hc_mix block input " + name, from_device(x, want_x.size()), want_x, 1e-10);
            EXPECT_NMSE("hc_mix inject weights " + name, from_device(a, want_a.size()), want_a, 1e-10);

            // The combine from the same weights on both sides (the mixer's own error stays out).
            const std::vector<float> y = random_floats(rng_, static_cast<size_t>(n * s.e));
            gpu::gpu_hc_combine(to_device(y), to_device(want_a), n, s.hc, s.e, d_R, ctx());
            hyper_connection_combine(y.data(), want_a.data(), n, cfg, R.data());
            EXPECT_NMSE("hc_combine " + name, from_device(d_R, R.size()), R, 1e-14);
        }
    }
}

// ---- QSA --------------------------------------------------------------------------------------

struct QsaCase {
    int64_t n_head, n_head_kv, head_dim, ix_heads, ix_dim, rope_dims, ratio, top_k, prompt, decode_steps;
};

// The pooled, normed and roped key of every complete block of raw keys [0, n_blocks · ratio), as
// pooled_block_keys of qsa_indexer.cpp.
std::vector<float> pooled_keys(const std::vector<float>& raw, int64_t n_blocks, int64_t ratio, int64_t d,
                               const std::vector<float>& k_norm, const RopeParams& rope) {
    std::vector<float> out(static_cast<size_t>(n_blocks * d), 0.0f);
    std::vector<int32_t> starts(static_cast<size_t>(n_blocks));
    for (int64_t b = 0; b < n_blocks; ++b) {
        float* row = out.data() + b * d;
        for (int64_t j = 0; j < ratio; ++j) {
            for (int64_t i = 0; i < d; ++i) row[i] += raw[static_cast<size_t>((b * ratio + j) * d + i)];
        }
        for (int64_t i = 0; i < d; ++i) row[i] /= static_cast<float>(ratio);
        starts[static_cast<size_t>(b)] = static_cast<int32_t>(b * ratio);
    }
    cpu_rms_norm(out.data(), k_norm.data(), n_blocks, d, 1e-6f, out.data());
    cpu_rope(out.data(), n_blocks, 1, rope, starts.data());
    return out;
}

// The blocks a query keeps, from qsa_query_ranges' ranges (those before the tail).
std::vector<int32_t> kept_blocks(const std::vector<KeyRange>& ranges, int64_t ratio, int64_t tail) {
    std::vector<int32_t> blocks;
    for (const KeyRange& r : ranges) {
        for (int64_t p = r.begin; p < std::min(r.end, tail); p += ratio) blocks.push_back(static_cast<int32_t>(p / ratio));
    }
    return blocks;
}

TEST_F(GpuQwen4ExpOps, QsaIndexKeysSelectionAndAttention) {
    const QsaCase cases[] = {
        // heads 4/2 of 64, indexer 2 heads of 32, keep 16/4 = 4 blocks of a 61-token prompt, then decode
        {4, 2, 64, 2, 32, 16, 4, 16, 61, 6},
        // Qwen3.8-Flash-Next's heads and indexer, a budget of 64 tokens (keep 16 blocks of 4)
        {24, 2, 256, 4, 128, 64, 4, 64, 203, 3},
        // a prompt that never selects (every query keeps all its blocks): dense causal attention
        {2, 1, 32, 1, 32, 8, 4, 64, 40, 2},
        // another ratio, an odd head dimension
        {3, 1, 40, 3, 48, 16, 8, 24, 90, 9},
    };
    for (const QsaCase& c : cases) {
        const int64_t n_ctx = c.prompt + c.decode_steps, d = c.ix_dim, keep = c.top_k / c.ratio;
        const int64_t k_dim = c.n_head_kv * c.head_dim, v_dim = k_dim;
        const std::string name = fmt::format("heads {}/{} dim {} indexer {}x{} ratio {} keep {} prompt {}", c.n_head,
                                             c.n_head_kv, c.head_dim, c.ix_heads, d, c.ratio, keep, c.prompt);
        const RopeParams rope{RopeStyle::Neox, d, c.rope_dims, 10000.0f};
        const gpu::GpuRope grope{true, d, c.rope_dims, 10000.0f};
        std::vector<float> k_norm = random_floats(rng_, static_cast<size_t>(d), 0.3f);
        for (float& v : k_norm) v += 1.0f;
        const std::vector<float> raw = random_floats(rng_, static_cast<size_t>(n_ctx * d));
        // Queries as qsa_select makes them (normed and roped on the CPU: the same inputs both sides).
        std::vector<float> iq = random_floats(rng_, static_cast<size_t>(n_ctx * c.ix_heads * d));
        std::vector<int32_t> positions(static_cast<size_t>(n_ctx));
        std::iota(positions.begin(), positions.end(), 0);
        cpu_rope(iq.data(), n_ctx, c.ix_heads, rope, positions.data());
        const std::vector<float> keys = random_floats(rng_, static_cast<size_t>(n_ctx * k_dim));
        const std::vector<float> values = random_floats(rng_, static_cast<size_t>(n_ctx * v_dim));
        const std::vector<float> q = random_floats(rng_, static_cast<size_t>(n_ctx * c.n_head * c.head_dim));

        // CPU: every query's ranges and its attention over them.
        const int64_t all_blocks = n_ctx / c.ratio;
        const std::vector<float> pooled = pooled_keys(raw, all_blocks, c.ratio, d, k_norm, rope);
        std::vector<int64_t> offsets{0};
        std::vector<KeyRange> ranges;
        std::vector<std::vector<int32_t>> want_blocks(static_cast<size_t>(n_ctx));
        const float inv_sqrt_d = 1.0f / std::sqrt(static_cast<float>(d));
        for (int64_t t = 0; t < n_ctx; ++t) {
            const int64_t n_visible = t + 1, n_blocks = n_visible / c.ratio;
            std::vector<float> scores(static_cast<size_t>(n_blocks > keep ? n_blocks : 0));
            for (int64_t b = 0; b < static_cast<int64_t>(scores.size()); ++b) {
                float sum = 0.0f;
                for (int64_t h = 0; h < c.ix_heads; ++h) {
                    float dot = 0.0f;
                    for (int64_t i = 0; i < d; ++i) dot += iq[static_cast<size_t>((t * c.ix_heads + h) * d + i)] * pooled[static_cast<size_t>(b * d + i)];
                    sum += std::max(dot, 0.0f);
                }
                scores[static_cast<size_t>(b)] = sum * inv_sqrt_d;
            }
            std::vector<KeyRange> r;
            qsa_query_ranges(scores.data(), n_blocks, keep, c.ratio, n_visible, r);
            if (n_blocks > keep) want_blocks[static_cast<size_t>(t)] = kept_blocks(r, c.ratio, n_blocks * c.ratio);
            ranges.insert(ranges.end(), r.begin(), r.end());
            offsets.push_back(static_cast<int64_t>(ranges.size()));
        }
        KvCache kv(1, n_ctx, k_dim, v_dim);
        std::copy(keys.begin(), keys.end(), kv.keys(0, 0));
        std::copy(values.begin(), values.end(), kv.values(0, 0));
        const KeySelection selection{offsets.data(), ranges.data()};
        AttentionParams p{c.n_head, c.n_head_kv, c.head_dim, c.head_dim, 1.0f / std::sqrt(static_cast<float>(c.head_dim))};
        p.selection = &selection;
        std::vector<float> want(static_cast<size_t>(n_ctx * c.n_head * c.head_dim));
        cpu_attention(q.data(), kv, 0, n_ctx, 0, p, want.data(), cpu_);

        // GPU: the prompt in one call, then one token a call, as a decode step runs.
        std::string error;
        gpu::GpuIndexKeys index(pool(), {c.ratio}, n_ctx, d, &error);
        ASSERT_TRUE(index.ok()) << error;
        gpu::GpuKvCache cache(pool(), 1, n_ctx, k_dim, v_dim, KvCacheType::F32, &error);
        ASSERT_TRUE(cache.ok()) << error;
        gpu::gpu_kv_store(to_device(keys), to_device(values), n_ctx, 0, cache, 0, ctx());
        gpu::GpuAttentionParams gp;
        gp.n_head = c.n_head, gp.n_head_kv = c.n_head_kv, gp.head_dim_k = c.head_dim, gp.head_dim_v = c.head_dim;
        gp.scale = p.scale;
        const float* d_raw = to_device(raw);
        const float* d_iq = to_device(iq);
        const float* d_q = to_device(q);
        const int32_t* d_pos = to_device(positions);
        const float* d_norm = to_device(k_norm);
        int32_t* d_blocks = device_zeros<int32_t>(static_cast<size_t>(n_ctx * keep));
        float* d_scores = device_zeros<float>(static_cast<size_t>(gpu::gpu_qsa_select_chunk(n_ctx, c.ratio) * std::max<int64_t>(1, n_ctx / c.ratio)));
        float* d_out = device_zeros<float>(want.size());
        const gpu::GpuKeySelection sel{c.ratio, keep, d_blocks};
        for (int64_t t0 = 0; t0 < n_ctx; t0 += t0 == 0 ? c.prompt : 1) {
            const int64_t n = t0 == 0 ? c.prompt : 1;
            gpu::gpu_qsa_store_keys(d_raw + t0 * d, n, d_pos + t0, index, 0, d_norm, 1e-6f, grope, ctx());
            gpu::gpu_qsa_select(d_iq + t0 * c.ix_heads * d, n, d_pos + t0, c.ix_heads, index, 0, keep, d_scores,
                                d_blocks + t0 * keep, ctx());
            gpu::GpuKeySelection step = sel;
            step.blocks += t0 * keep;
            gpu::gpu_qsa_attention(d_q + t0 * c.n_head * c.head_dim, cache, 0, n, d_pos + t0, gp, step,
                                   d_out + t0 * c.n_head * c.head_dim, ctx());
        }
        EXPECT_NMSE("qsa pooled keys " + name, from_device(index.pooled(0), pooled.size()), pooled, 1e-12);
        const std::vector<int32_t> got_blocks = from_device(d_blocks, static_cast<size_t>(n_ctx * keep));
        int64_t selecting = 0, differ = 0;
        for (int64_t t = 0; t < n_ctx; ++t) {
            const std::vector<int32_t>& w = want_blocks[static_cast<size_t>(t)];
            if (w.empty()) continue;
            ++selecting;
            const std::vector<int32_t> g(got_blocks.begin() + t * keep, got_blocks.begin() + (t + 1) * keep);
            differ += g != w;
        }
        std::printf("op-parity  qsa_select %s: %lld of %lld queries select, %lld differ\n", name.c_str(),
                    static_cast<long long>(selecting), static_cast<long long>(n_ctx), static_cast<long long>(differ));
        EXPECT_EQ(differ, 0) << name;
        if (c.top_k == 64 && c.prompt == 40) EXPECT_EQ(selecting, 0) << name;  // the dense case stays dense
        else EXPECT_GT(selecting, n_ctx / 2) << name;
        EXPECT_NMSE("qsa_attention " + name, from_device(d_out, want.size()), want, 1e-10);
    }
}

// ---- PLE --------------------------------------------------------------------------------------

// The gate loop of ple_block: u_s = σ(sign(g) sqrt(max(|g|, 1e-6))) · v, g = k_s · q_s / sqrt(n).
std::vector<float> ple_gate_reference(const std::vector<float>& key, const std::vector<float>& query,
                                      const std::vector<float>& value, int64_t n_tokens, int64_t hc, int64_t e) {
    const int64_t wide = hc * e;
    std::vector<float> u(static_cast<size_t>(n_tokens * wide));
    const float inv_sqrt_e = 1.0f / std::sqrt(static_cast<float>(e));
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t s = 0; s < hc; ++s) {
            float dot = 0.0f;
            for (int64_t i = 0; i < e; ++i) dot += key[static_cast<size_t>(t * wide + s * e + i)] * query[static_cast<size_t>(t * wide + s * e + i)];
            float g = dot * inv_sqrt_e;
            g = (g > 0.0f ? 1.0f : g < 0.0f ? -1.0f : 0.0f) * std::sqrt(std::max(std::fabs(g), 1e-6f));
            const float scale = host_sigmoid(g);
            for (int64_t i = 0; i < e; ++i) u[static_cast<size_t>(t * wide + s * e + i)] = scale * value[static_cast<size_t>(t * e + i)];
        }
    }
    return u;
}

TEST_F(GpuQwen4ExpOps, PleGateAndDilatedConvolution) {
    struct Shape {
        int64_t hc, e, kernel, dilation;
    };
    for (const Shape& s : {Shape{4, 2560, 4, 3}, Shape{4, 64, 4, 3}, Shape{3, 40, 3, 2}, Shape{2, 24, 1, 1}}) {
        const int64_t wide = s.hc * s.e, past = (s.kernel - 1) * s.dilation;
        const std::vector<float> weight = random_floats(rng_, static_cast<size_t>(wide * s.kernel), 0.5f);
        std::vector<float> history(static_cast<size_t>(past * wide), 0.0f);  // a sequence starts with zeros
        float* d_history = device_zeros<float>(std::max<size_t>(1, history.size()));
        const float* d_weight = to_device(weight);
        std::vector<float> R = random_floats(rng_, static_cast<size_t>(64 * wide));
        // A prompt, then one-token steps and a short batch: each must continue from the history left.
        for (int64_t n : {int64_t{29}, int64_t{1}, int64_t{1}, int64_t{2}, int64_t{1}}) {
            const std::string name = fmt::format("hc {} n_embd {} kernel {} dilation {} n={}", s.hc, s.e, s.kernel,
                                                 s.dilation, n);
            const std::vector<float> key = random_floats(rng_, static_cast<size_t>(n * wide));
            const std::vector<float> query = random_floats(rng_, static_cast<size_t>(n * wide));
            const std::vector<float> value = random_floats(rng_, static_cast<size_t>(n * s.e));
            const std::vector<float> want_u = ple_gate_reference(key, query, value, n, s.hc, s.e);
            float* u = device_zeros<float>(want_u.size());
            gpu::gpu_ple_gate(to_device(key), to_device(query), to_device(value), n, s.hc, s.e, u, ctx());
            EXPECT_NMSE("ple_gate " + name, from_device(u, want_u.size()), want_u, 1e-12);

            // R += u + silu(conv(x)) over [history ; x], as dilated_causal_conv of ple_block.cpp.
            const std::vector<float> x = random_floats(rng_, static_cast<size_t>(n * wide));
            std::vector<float> window(history);
            window.insert(window.end(), x.begin(), x.end());
            std::vector<float> want_R(R.begin(), R.begin() + n * wide);
            for (int64_t t = 0; t < n; ++t) {
                for (int64_t ch = 0; ch < wide; ++ch) {
                    float sum = 0.0f;
                    for (int64_t k = 0; k < s.kernel; ++k) {
                        sum += weight[static_cast<size_t>(ch * s.kernel + k)] * window[static_cast<size_t>((t + k * s.dilation) * wide + ch)];
                    }
                    want_R[static_cast<size_t>(t * wide + ch)] += want_u[static_cast<size_t>(t * wide + ch)] + sum * host_sigmoid(sum);
                }
            }
            std::copy(window.end() - past * wide, window.end(), history.begin());
            float* d_R = to_device(std::vector<float>(R.begin(), R.begin() + n * wide));
            gpu::gpu_ple_conv_add(to_device(x), to_device(want_u), n, wide, d_weight, s.kernel, s.dilation, d_history,
                                  d_R, ctx());
            EXPECT_NMSE("ple_conv_add " + name, from_device(d_R, want_R.size()), want_R, 1e-12);
            if (past > 0) EXPECT_NMSE("ple_conv history " + name, from_device(d_history, history.size()), history, 0.0);
        }
    }
}

#else
STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuQwen4ExpOps)
#endif

}  // namespace
}  // namespace strata::test
