// The ops of the Qwen3-Next / Qwen3.5-MoE hybrid layers (gpu_ops_delta_net.h) vs their CPU
// references (backend/cpu/ssm_ops.h, and the loops of gated_delta_net_block.cpp,
// gated_attention_block.cpp and qwen3next.cpp, repeated here as they are written there); see
// op_parity.h for the method. Shapes: the real models' DeltaNet (n_k 16, n_v 32, d 128, conv
// kernel 4), the tiny test fixture's (d 16) and two odd ones that leave rows and columns of the
// recurrence's thread layout partly empty; batches of 1, 3 and 37 tokens, each followed by a
// one-token step that must continue from the state the batch left. Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "backend/cpu/ops.h"
#include "backend/cpu/ssm_ops.h"
#if STRATA_HAS_GPU
#include "backend/gpu/gpu_ops_delta_net.h"
#endif

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

struct DeltaNetShape {
    const char* name;
    int64_t n_k, n_v, d_k, d_v, kernel;
    int64_t key_dim() const { return n_k * d_k; }
    int64_t value_dim() const { return n_v * d_v; }
    int64_t conv_ch() const { return 2 * key_dim() + value_dim(); }
};
constexpr DeltaNetShape kShapes[] = {
    {"qwen3next", 16, 32, 128, 128, 4},
    {"tiny", 2, 4, 16, 16, 4},
    {"odd", 2, 6, 40, 24, 3},      // rows of S spread 10 to a lane over 4 lanes, most columns of a block empty
    {"wide", 1, 2, 256, 200, 4},  // the largest head dimension, 16 lanes a column
};
constexpr int64_t kBatches[] = {1, 3, 37};
constexpr float kL2Eps = 1e-6f;

std::string shape_name(const DeltaNetShape& s) {
    return fmt::format("{} (n_k {} n_v {} d_k {} d_v {})", s.name, s.n_k, s.n_v, s.d_k, s.d_v);
}

// Rows of conv output as the recurrence sees them: q and k heads L2-normalised, q scaled.
void cpu_prepare_qk(std::vector<float>& qkv, int64_t n_tokens, const DeltaNetShape& s) {
    const float q_scale = 1.0f / std::sqrt(static_cast<float>(s.d_k));
    for (int64_t t = 0; t < n_tokens; ++t) {
        float* row = qkv.data() + t * s.conv_ch();
        cpu_l2_norm(row, 2 * s.n_k, s.d_k, kL2Eps);
        for (int64_t i = 0; i < s.key_dim(); ++i) row[i] *= q_scale;
    }
}

// The gates loop of gated_delta_net_block.cpp: (beta, g) per token and v head. fused: ba rows of
// 2·n_v; otherwise n_tokens rows of n_v betas, then as many of alphas.
std::vector<float> cpu_gates(const std::vector<float>& ba, bool fused, int64_t n, int64_t n_k, int64_t n_v,
                             const std::vector<float>& a_neg, const std::vector<float>& dt_bias) {
    const int64_t r = n_v / n_k;
    std::vector<float> gates(static_cast<size_t>(n * 2 * n_v));
    for (int64_t t = 0; t < n; ++t) {
        for (int64_t hv = 0; hv < n_v; ++hv) {
            float b_raw, a_raw;
            if (fused) {
                const float* row = ba.data() + t * 2 * n_v + (hv / r) * 2 * r;
                b_raw = row[hv % r];
                a_raw = row[r + hv % r];
            } else {
                b_raw = ba[static_cast<size_t>(t * n_v + hv)];
                a_raw = ba[static_cast<size_t>(n * n_v + t * n_v + hv)];
            }
            gates[static_cast<size_t>((t * n_v + hv) * 2)] = 1.0f / (1.0f + std::exp(-b_raw));
            gates[static_cast<size_t>((t * n_v + hv) * 2 + 1)] =
                a_neg[static_cast<size_t>(hv)] * softplus(a_raw + dt_bias[static_cast<size_t>(hv)]);
        }
    }
    return gates;
}

// The recurrence loop of gated_delta_net_block.cpp for one sequence.
void cpu_delta_rule(const std::vector<float>& qkv, const std::vector<float>& gates, int64_t n, const DeltaNetShape& s,
                    gpu::GpuVHeadOrder order, std::vector<float>& state, std::vector<float>& out) {
    const int64_t r = s.n_v / s.n_k;
    out.assign(static_cast<size_t>(n * s.value_dim()), 0.0f);
    for (int64_t hv = 0; hv < s.n_v; ++hv) {
        const int64_t hk = order == gpu::GpuVHeadOrder::Grouped ? hv / r : hv % s.n_k;
        float* st = state.data() + hv * s.d_k * s.d_v;
        for (int64_t t = 0; t < n; ++t) {
            const float* row = qkv.data() + t * s.conv_ch();
            const float* g_b = gates.data() + (t * s.n_v + hv) * 2;
            cpu_gated_delta_step(st, row + hk * s.d_k, row + s.key_dim() + hk * s.d_k,
                                 row + 2 * s.key_dim() + hv * s.d_v, g_b[1], g_b[0], s.d_k, s.d_v,
                                 out.data() + t * s.value_dim() + hv * s.d_v);
        }
    }
}

class GpuDeltaNet : public GpuOpTest {};

// A batch, then a step of one token and one of two: with kernel 4 the last two are shorter than
// the history (3 rows), so older history rows must shift up. 150 tokens split over blocks.
TEST_F(GpuDeltaNet, CausalConv1dCarriesHistory) {
    std::mt19937 rng(21);
    for (const DeltaNetShape& s : kShapes) {
        const int64_t ch = s.conv_ch(), n_hist = s.kernel - 1;
        const std::vector<float> weight = random_floats(rng, static_cast<size_t>(ch * s.kernel), 0.5f);
        const float* d_weight = to_device(weight);
        for (const int64_t prompt : {int64_t{1}, int64_t{3}, int64_t{37}, int64_t{150}}) {
            std::vector<float> history = random_floats(rng, static_cast<size_t>(n_hist * ch));  // carried from before
            float* d_history = to_device(history);
            for (const int64_t n : {prompt, int64_t{1}, int64_t{2}}) {
                const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * ch), 2.0f);
                std::vector<float> want(x.size());
                cpu_causal_conv1d_silu(x.data(), n, ch, weight.data(), s.kernel, history.data(), want.data());
                float* out = device_zeros<float>(x.size());
                gpu::gpu_causal_conv1d_silu(to_device(x), n, ch, d_weight, s.kernel, d_history, out, ctx());
                const std::string name = fmt::format("conv1d_silu {} n={} after {}", s.name, n, prompt);
                EXPECT_NMSE(name, from_device(out, x.size()), want, 1e-12);
                EXPECT_NMSE(name + " history", from_device(d_history, history.size()), history, 0.0);
            }
        }
    }
}

TEST_F(GpuDeltaNet, QkL2NormAndScale) {
    std::mt19937 rng(22);
    for (const DeltaNetShape& s : kShapes) {
        for (const int64_t n : kBatches) {
            const std::vector<float> qkv = random_floats(rng, static_cast<size_t>(n * s.conv_ch()), 3.0f);
            std::vector<float> want = qkv;
            cpu_prepare_qk(want, n, s);
            float* d = to_device(qkv);
            const float q_scale = 1.0f / std::sqrt(static_cast<float>(s.d_k));
            gpu::gpu_delta_net_qk_norm(d, n, s.conv_ch(), s.n_k, s.d_k, kL2Eps, q_scale, ctx());
            EXPECT_NMSE(fmt::format("delta_net_qk_norm {} n={}", shape_name(s), n), from_device(d, qkv.size()), want,
                        1e-12);
        }
    }
}

TEST_F(GpuDeltaNet, GatesFusedAndSeparate) {
    std::mt19937 rng(23);
    for (const DeltaNetShape& s : kShapes) {
        std::vector<float> a_neg = random_floats(rng, static_cast<size_t>(s.n_v));
        for (float& a : a_neg) a = -std::exp(a);  // ssm_a = −exp(A_log)
        const std::vector<float> dt_bias = random_floats(rng, static_cast<size_t>(s.n_v));
        const float* d_a_neg = to_device(a_neg);
        const float* d_dt_bias = to_device(dt_bias);
        for (const int64_t n : kBatches) {
            std::vector<float> ba = random_floats(rng, static_cast<size_t>(n * 2 * s.n_v), 4.0f);
            ba[0] = 30.0f, ba[ba.size() - 1] = 25.0f;  // past softplus' threshold, whichever part they are
            for (const bool fused : {true, false}) {
                const std::vector<float> want = cpu_gates(ba, fused, n, s.n_k, s.n_v, a_neg, dt_bias);
                float* gates = device_zeros<float>(want.size());
                const float* d_ba = to_device(ba);
                if (fused) {
                    gpu::gpu_delta_net_gates_fused(d_ba, n, s.n_k, s.n_v, d_a_neg, d_dt_bias, gates, ctx());
                } else {
                    gpu::gpu_delta_net_gates_separate(d_ba, d_ba + n * s.n_v, n, s.n_v, d_a_neg, d_dt_bias, gates,
                                                      ctx());
                }
                EXPECT_NMSE(fmt::format("delta_net_gates {} {} n={}", fused ? "fused" : "separate", shape_name(s), n),
                            from_device(gates, want.size()), want, 1e-12);
            }
        }
    }
}

// A prompt, then one more token through the state it left, against the CPU stepping the same
// tokens; the state starts non-zero, as after earlier batches.
TEST_F(GpuDeltaNet, GatedDeltaRuleCarriesState) {
    std::mt19937 rng(24);
    for (const DeltaNetShape& s : kShapes) {
        for (const gpu::GpuVHeadOrder order : {gpu::GpuVHeadOrder::Grouped, gpu::GpuVHeadOrder::Tiled}) {
            const gpu::GpuDeltaNetShape shape{s.n_k, s.n_v, s.d_k, s.d_v, order};
            const char* order_name = order == gpu::GpuVHeadOrder::Grouped ? "grouped" : "tiled";
            for (const int64_t prompt : kBatches) {
                std::vector<float> state = random_floats(rng, static_cast<size_t>(s.n_v * s.d_k * s.d_v), 0.1f);
                float* d_state = to_device(state);
                for (const int64_t n : {prompt, int64_t{1}}) {
                    std::vector<float> qkv = random_floats(rng, static_cast<size_t>(n * s.conv_ch()));
                    cpu_prepare_qk(qkv, n, s);
                    std::vector<float> gates(static_cast<size_t>(n * s.n_v * 2));
                    std::uniform_real_distribution<float> beta(0.0f, 1.0f), g(-3.0f, 0.0f);
                    for (size_t i = 0; i < gates.size(); i += 2) gates[i] = beta(rng), gates[i + 1] = g(rng);
                    std::vector<float> want;
                    cpu_delta_rule(qkv, gates, n, s, order, state, want);
                    float* out = device_zeros<float>(want.size());
                    gpu::gpu_gated_delta_rule(to_device(qkv), n, s.conv_ch(), to_device(gates), shape, d_state, out,
                                              ctx());
                    const std::string name =
                        fmt::format("gated_delta_rule {} {} n={} after {}", order_name, shape_name(s), n, prompt);
                    EXPECT_NMSE(name, from_device(out, want.size()), want, 1e-10);
                    EXPECT_NMSE(name + " state", from_device(d_state, state.size()), state, 1e-10);
                }
            }
        }
    }
}

TEST_F(GpuDeltaNet, GatedRmsNormInPlaceAndNot) {
    std::mt19937 rng(25);
    for (const DeltaNetShape& s : kShapes) {
        for (const int64_t n : kBatches) {
            const int64_t rows = n * s.n_v;
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(rows * s.d_v), 2.0f);
            const std::vector<float> z = random_floats(rng, x.size(), 2.0f);
            const std::vector<float> w = random_floats(rng, static_cast<size_t>(s.d_v));
            std::vector<float> want(x.size());
            cpu_gated_rms_norm(x.data(), z.data(), w.data(), rows, s.d_v, 1e-6f, want.data());
            const float* d_z = to_device(z);
            const float* d_w = to_device(w);
            float* out = device_zeros<float>(x.size());
            gpu::gpu_gated_rms_norm(to_device(x), d_z, d_w, rows, s.d_v, 1e-6f, out, ctx());
            const std::string name = fmt::format("gated_rms_norm [{}, {}]", s.d_v, rows);
            EXPECT_NMSE(name, from_device(out, x.size()), want, 1e-11);
            float* in_place = to_device(x);
            gpu::gpu_gated_rms_norm(in_place, d_z, d_w, rows, s.d_v, 1e-6f, in_place, ctx());
            EXPECT_NMSE(name + " in place", from_device(in_place, x.size()), want, 1e-11);
        }
    }
}

// Gated attention (Qwen3-Next's 16 heads of 256, and a small one): the q projection split into
// query and gate, and the attention output scaled by sigmoid(gate), as gated_attention_block.cpp.
TEST_F(GpuDeltaNet, AttentionQueryGate) {
    std::mt19937 rng(26);
    struct Heads { int64_t n_head, hd; };
    for (const Heads h : {Heads{16, 256}, Heads{4, 16}}) {
        for (const int64_t n : kBatches) {
            const int64_t q_dim = h.n_head * h.hd;
            const std::vector<float> qg = random_floats(rng, static_cast<size_t>(n * 2 * q_dim), 3.0f);
            std::vector<float> want_q(static_cast<size_t>(n * q_dim)), want_gate(want_q.size());
            for (int64_t i = 0; i < n * h.n_head; ++i) {
                std::copy_n(qg.begin() + i * 2 * h.hd, h.hd, want_q.begin() + i * h.hd);
                std::copy_n(qg.begin() + i * 2 * h.hd + h.hd, h.hd, want_gate.begin() + i * h.hd);
            }
            float* q = device_zeros<float>(want_q.size());
            float* gate = device_zeros<float>(want_q.size());
            gpu::gpu_split_q_gate(to_device(qg), n, h.n_head, h.hd, q, gate, ctx());
            const std::string name = fmt::format("[{} heads of {}] n={}", h.n_head, h.hd, n);
            EXPECT_NMSE("split_q_gate q " + name, from_device(q, want_q.size()), want_q, 0.0);
            EXPECT_NMSE("split_q_gate gate " + name, from_device(gate, want_q.size()), want_gate, 0.0);

            const std::vector<float> attn = random_floats(rng, want_q.size());
            std::vector<float> want = attn;
            for (size_t i = 0; i < want.size(); ++i) want[i] *= 1.0f / (1.0f + std::exp(-want_gate[i]));
            float* d_attn = to_device(attn);
            gpu::gpu_mul_sigmoid(d_attn, gate, n * q_dim, ctx());
            EXPECT_NMSE("mul_sigmoid " + name, from_device(d_attn, attn.size()), want, 1e-12);
        }
    }
}

// The shared expert's gated output added to the residual, as qwen3next.cpp's shared_expert() and
// the cpu_add after the routed experts.
TEST_F(GpuDeltaNet, SharedExpertSigmoidScale) {
    std::mt19937 rng(27);
    for (const int64_t n_embd : {int64_t{2048}, int64_t{64}}) {
        for (const int64_t n : kBatches) {
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * n_embd));
            const std::vector<float> y = random_floats(rng, x.size());
            const std::vector<float> logit = random_floats(rng, static_cast<size_t>(n), 3.0f);
            std::vector<float> acc(x.size()), want = x;
            for (int64_t t = 0; t < n; ++t) {
                const float sc = 1.0f / (1.0f + std::exp(-logit[static_cast<size_t>(t)]));
                for (int64_t d = t * n_embd; d < (t + 1) * n_embd; ++d) {
                    acc[static_cast<size_t>(d)] = sc * y[static_cast<size_t>(d)];
                }
            }
            cpu_add(want.data(), acc.data(), n * n_embd);
            float* d_x = to_device(x);
            gpu::gpu_add_sigmoid_scaled(d_x, to_device(y), to_device(logit), n, n_embd, ctx());
            EXPECT_NMSE(fmt::format("add_sigmoid_scaled [{}, {}]", n_embd, n), from_device(d_x, x.size()), want, 1e-13);
        }
    }
}

#endif

}  // namespace
}  // namespace strata::test
