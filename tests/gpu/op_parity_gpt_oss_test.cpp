// The ops gpt-oss adds to the Llama family's GPU forward, vs their CPU references (op_parity.h):
// per-expert biases with the clamped SwiGLU (and the plain one), the down projection's bias, and
// rope from a precomputed YaRN table. Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include "backend/cpu/ops.h"
#include "backend/cpu/rope_table.h"
#include "backend/gpu/gpu_ops.h"
#include "model/blocks/moe_routing.h"

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

class GpuGptOssOps : public GpuOpTest {};

std::vector<int32_t> random_ids(std::mt19937& rng, int64_t n, int64_t n_expert) {
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(n_expert - 1));
    std::vector<int32_t> ids(static_cast<size_t>(n));
    for (int32_t& id : ids) id = pick(rng);
    return ids;
}

TEST_F(GpuGptOssOps, ExpertBiasesAndActivations) {
    std::mt19937 rng(11);
    const int64_t n_expert = 8, ff = 96;
    for (const int64_t pairs : {1, 2, 10, 77}) {
        for (const bool with_bias : {true, false}) {
            for (const auto act : {ExpertActivation::GptOssClampedSwiGlu, ExpertActivation::SwiGlu}) {
                // Scale 6: many values beyond the clamp limit of 7 once the biases are added.
                std::vector<float> gate = random_floats(rng, static_cast<size_t>(pairs * ff), 6.0f);
                const std::vector<float> up = random_floats(rng, static_cast<size_t>(pairs * ff), 6.0f);
                const std::vector<float> gate_bias = random_floats(rng, static_cast<size_t>(n_expert * ff), 3.0f);
                const std::vector<float> up_bias = random_floats(rng, static_cast<size_t>(n_expert * ff), 3.0f);
                const std::vector<int32_t> ids = random_ids(rng, pairs, n_expert);

                float* d_gate = to_device(gate);
                std::vector<float> want_up = up;
                for (int64_t p = 0; p < pairs; ++p) {
                    float* g = gate.data() + p * ff;
                    float* u = want_up.data() + p * ff;
                    if (with_bias) {
                        cpu_add_bias(g, gate_bias.data() + ids[static_cast<size_t>(p)] * ff, 1, ff);
                        cpu_add_bias(u, up_bias.data() + ids[static_cast<size_t>(p)] * ff, 1, ff);
                    }
                    apply_expert_activation(act, g, u, ff);
                }
                gpu::gpu_moe_bias_activation(d_gate, to_device(up), to_device(ids), pairs, ff,
                                             with_bias ? to_device(gate_bias) : nullptr,
                                             with_bias ? to_device(up_bias) : nullptr,
                                             act == ExpertActivation::SwiGlu ? gpu::GpuExpertActivation::SwiGlu
                                                                             : gpu::GpuExpertActivation::GptOssClampedSwiGlu,
                                             ctx());
                EXPECT_NMSE(fmt::format("moe_bias_activation {} pairs={} bias={}",
                                        act == ExpertActivation::SwiGlu ? "swiglu" : "gpt-oss clamped", pairs, with_bias),
                            from_device(d_gate, gate.size()), gate, 1e-12);
            }
        }
    }
}

TEST_F(GpuGptOssOps, DownProjectionBias) {
    std::mt19937 rng(12);
    const int64_t n_expert = 8, e = 200;
    for (const int64_t pairs : {1, 13}) {
        std::vector<float> out = random_floats(rng, static_cast<size_t>(pairs * e));
        const std::vector<float> bias = random_floats(rng, static_cast<size_t>(n_expert * e));
        const std::vector<int32_t> ids = random_ids(rng, pairs, n_expert);
        float* d_out = to_device(out);
        gpu::gpu_moe_add_expert_bias(d_out, to_device(ids), pairs, e, to_device(bias), ctx());
        for (int64_t p = 0; p < pairs; ++p) cpu_add_bias(out.data() + p * e, bias.data() + ids[static_cast<size_t>(p)] * e, 1, e);
        // One float add per value on both sides: the same bits.
        EXPECT_NMSE(fmt::format("moe_add_expert_bias pairs={}", pairs), from_device(d_out, out.size()), out, 0.0);
    }
}

// gpt-oss-120b's rope: YaRN factor 32 over 4096 positions, base 150000, head 64, NEOX pairs.
TEST_F(GpuGptOssOps, RopeFromYarnTable) {
    std::mt19937 rng(13);
    const int64_t head_dim = 64, n_head = 4, n_tokens = 5;
    const YarnParams yarn{32.0f, 4096, 32.0f, 1.0f, yarn_mscale(32.0f), false};
    for (const RopeStyle style : {RopeStyle::Neox, RopeStyle::Normal}) {
        const RopeTable table = rope_table_yarn(style, head_dim, 150000.0f, yarn);
        const std::vector<int32_t> positions = {0, 1, 4095, 30000, 131071};
        std::vector<float> x = random_floats(rng, static_cast<size_t>(n_tokens * n_head * head_dim));
        float* d_x = to_device(x);
        std::vector<double> freq = table.inv_freq;
        gpu::GpuRope rope{style == RopeStyle::Neox, head_dim, head_dim, 150000.0f};
        rope.inv_freq = to_device(freq);
        rope.attn_factor = table.attn_factor;
        gpu::gpu_rope(d_x, n_tokens, n_head, rope, to_device(positions), ctx());
        cpu_rope_table(x.data(), n_tokens, n_head, head_dim, table, positions.data());
        // cos/sin of the device's libm vs the host's, in double: ~1e-16 apart before rounding.
        EXPECT_NMSE(fmt::format("rope yarn table {}", style == RopeStyle::Neox ? "neox" : "normal"),
                    from_device(d_x, x.size()), x, 1e-12);
    }
}

#endif  // STRATA_HAS_GPU

}  // namespace
}  // namespace strata::test
