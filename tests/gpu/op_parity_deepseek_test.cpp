// DeepSeek-V2/V3's GPU ops (backend/gpu/gpu_ops_deepseek.h) vs their CPU references (see
// op_parity.h): the grouped routing against route_grouped, the per-head k_b / v_b products against
// cpu_matmul per head, and the row passes of the latent attention against the arithmetic of
// mla_attention_block (rms norm, cpu_rope_table, the cache rows). Skips without a GPU.
#if STRATA_HAS_GPU
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/rope_table.h"
#include "backend/gpu/gpu_ops_deepseek.h"
#include "core/fp16.h"
#include "core/thread_pool.h"
#include "model/blocks/moe_routing.h"

namespace strata::test {
namespace {

class GpuDeepseekOps : public GpuOpTest {};

// Per token, the (expert, weight) pairs sorted by expert: route_grouped's assignments have no
// order within a token, the GPU's are best first.
using TokenChoice = std::vector<std::pair<int32_t, float>>;
std::vector<TokenChoice> by_token(const ExpertAssignments& routed, int64_t n_tokens) {
    std::vector<TokenChoice> out(static_cast<size_t>(n_tokens));
    for (size_t e = 0; e < routed.size(); ++e) {
        for (const auto& [t, w] : routed[e]) out[static_cast<size_t>(t)].emplace_back(static_cast<int32_t>(e), w);
    }
    for (auto& c : out) std::sort(c.begin(), c.end());
    return out;
}
std::vector<TokenChoice> by_token(const std::vector<int32_t>& ids, const std::vector<float>& weights, int64_t n_tokens,
                                  int64_t k) {
    std::vector<TokenChoice> out(static_cast<size_t>(n_tokens));
    for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t j = 0; j < k; ++j) {
            const size_t i = static_cast<size_t>(t * k + j);
            out[static_cast<size_t>(t)].emplace_back(ids[i], weights[i]);
        }
        std::sort(out[static_cast<size_t>(t)].begin(), out[static_cast<size_t>(t)].end());
    }
    return out;
}

// route_grouped's choice values of one token: the scores plus the selection bias.
std::vector<float> host_choices(const float* logits, int64_t n_expert, bool sigmoid, const float* bias) {
    std::vector<float> c(logits, logits + n_expert);
    if (sigmoid) {
        for (float& v : c) v = 1.0f / (1.0f + std::exp(-v));
    } else {
        cpu_softmax(c.data(), n_expert);
    }
    if (bias) {
        for (int64_t i = 0; i < n_expert; ++i) c[static_cast<size_t>(i)] += bias[i];
    }
    return c;
}

// Every shape of router DeepSeek uses: V3 (256 experts in 8 groups, 4 used, top 8, sigmoid, the
// correction bias, normalized, scaled 2.5), the fixture's (16 in 4, 2 used), V2-Lite-like softmax
// without groups or normalization, groups that all stay eligible; then logits and biases on a
// coarse grid, so that many scores, merits and choices tie and the lower index must win on both.
TEST_F(GpuDeepseekOps, GroupedRoutingMatchesRouteGrouped) {
    std::mt19937 rng(31);
    struct Case {
        int64_t n_tokens, n_expert, k, n_group, n_group_used;
        bool sigmoid, bias, normalize;
        float scale;
        bool ties;
    };
    const Case cases[] = {
        {5, 256, 8, 8, 4, true, true, true, 2.5f, false},   {37, 16, 4, 4, 2, true, true, true, 2.5f, false},
        {9, 64, 6, 1, 1, false, false, false, 1.0f, false}, {3, 32, 4, 8, 8, true, true, true, 1.0f, false},
        {17, 160, 6, 8, 3, false, false, true, 16.0f, false}, {1, 256, 8, 8, 4, true, true, true, 2.5f, false},
        {33, 256, 8, 8, 4, true, true, true, 2.5f, true},    {20, 16, 4, 4, 2, true, false, true, 1.0f, true},
        {12, 64, 6, 1, 1, false, false, false, 1.0f, true},
    };
    for (const Case& c : cases) {
        std::vector<float> logits = random_floats(rng, static_cast<size_t>(c.n_tokens * c.n_expert), 2.0f);
        std::vector<float> bias = random_floats(rng, static_cast<size_t>(c.n_expert), 0.1f);
        if (c.ties) {
            for (float& v : logits) v = std::round(v);
            for (float& v : bias) v = std::round(v * 20.0f) / 20.0f;
        }
        GroupedRouting rp;
        rp.n_expert = c.n_expert, rp.n_used = c.k, rp.n_group = c.n_group, rp.n_group_used = c.n_group_used;
        rp.sigmoid = c.sigmoid, rp.selection_bias = c.bias ? bias.data() : nullptr;
        rp.normalize = c.normalize, rp.scale = c.scale;
        ExpertAssignments routed;
        route_grouped(logits.data(), c.n_tokens, rp, routed);
        const std::vector<TokenChoice> want = by_token(routed, c.n_tokens);

        gpu::GpuGroupedRouting gp{c.n_expert, c.k, c.n_group, c.n_group_used, c.sigmoid,
                                  c.bias ? to_device(bias) : nullptr, c.normalize, c.scale};
        const size_t pairs = static_cast<size_t>(c.n_tokens * c.k);
        int32_t* ids = device_zeros<int32_t>(pairs);
        float* weights = device_zeros<float>(pairs);
        gpu::gpu_moe_route_grouped(to_device(logits), c.n_tokens, gp, ids, weights, ctx());
        const std::vector<int32_t> got_ids = from_device(ids, pairs);
        const std::vector<float> got_w = from_device(weights, pairs);
        const std::vector<TokenChoice> got = by_token(got_ids, got_w, c.n_tokens, c.k);

        const std::string name = fmt::format("moe_route_grouped {} experts {}/{} groups top {} n={} {}{}{}{}", c.n_expert,
                                             c.n_group_used, c.n_group, c.k, c.n_tokens, c.sigmoid ? "sigmoid" : "softmax",
                                             c.bias ? " bias" : "", c.normalize ? " normalized" : "", c.ties ? " ties" : "");
        std::vector<float> want_w, got_w_sorted;
        for (int64_t t = 0; t < c.n_tokens; ++t) {
            const TokenChoice& a = want[static_cast<size_t>(t)];
            const TokenChoice& b = got[static_cast<size_t>(t)];
            ASSERT_EQ(a.size(), b.size()) << name << " token " << t;
            for (size_t j = 0; j < a.size(); ++j) {
                EXPECT_EQ(b[j].first, a[j].first) << name << " token " << t;
                want_w.push_back(a[j].second);
                got_w_sorted.push_back(b[j].second);
            }
        }
        // Best first, as gpu_moe_route_softmax_topk writes them: each pick's choice (score + bias,
        // recomputed here) is no higher than the previous one's, the lower index first on a tie.
        for (int64_t t = 0; t < c.n_tokens; ++t) {
            const std::vector<float> choice = host_choices(logits.data() + t * c.n_expert, c.n_expert, c.sigmoid,
                                                           c.bias ? bias.data() : nullptr);
            for (int64_t j = 1; j < c.k; ++j) {
                const int32_t a = got_ids[static_cast<size_t>(t * c.k + j - 1)], b = got_ids[static_cast<size_t>(t * c.k + j)];
                const float ca = choice[static_cast<size_t>(a)], cb = choice[static_cast<size_t>(b)];
                if (ca == cb) EXPECT_LT(a, b) << name << " token " << t << " pick " << j;  // a tie: equal inputs
                else EXPECT_GT(ca, cb - 1e-6f * std::fabs(cb)) << name << " token " << t << " pick " << j;
            }
        }
        // expf on the device vs the host's exp: an ulp or two per score.
        EXPECT_NMSE(name, got_w_sorted, want_w, 1e-12);
    }
}

// The exact product of row p of x with matrix `head of p` (p = t·n_head + h) of w.
std::vector<float> exact_heads(const HostWeight& w, const std::vector<float>& x, int64_t x_stride, int64_t n_tokens,
                               int64_t n_head, bool f16) {
    const int64_t n_in = w.view.ne[0], n_out = w.view.ne[1];
    const auto round = [f16](float v) { return f16 ? fp16_to_fp32(fp32_to_fp16(v)) : v; };
    std::vector<float> row(static_cast<size_t>(n_in)), y(static_cast<size_t>(n_tokens * n_head * n_out));
    for (int64_t h = 0; h < n_head; ++h) {
        for (int64_t o = 0; o < n_out; ++o) {
            quant_traits(w.view.type).dequantize_row(w.view.matrix(h) + static_cast<uint64_t>(o) * w.view.row_bytes,
                                                     row.data(), n_in);
            for (int64_t t = 0; t < n_tokens; ++t) {
                const float* xr = x.data() + (t * n_head + h) * x_stride;
                double s = 0.0;
                for (int64_t i = 0; i < n_in; ++i) s += static_cast<double>(round(row[static_cast<size_t>(i)])) * round(xr[i]);
                y[static_cast<size_t>((t * n_head + h) * n_out + o)] = static_cast<float>(s);
            }
        }
    }
    return y;
}

// k_b on the strided no-rope parts of the queries into the strided latent part of the absorbed
// queries (gathered and scattered), v_b on packed rows; one token (decode), a few, and a prompt
// batch wide enough for the tiled kernel when the rows allow it.
TEST_F(GpuDeepseekOps, PerHeadProductsMatchCpu) {
    ThreadPool threads(ThreadPool::Options{.threads = 2});
    CpuContext cpu(threads);
    std::mt19937 rng(32);
    struct Shape {
        int64_t n_in, n_out, n_head, x_stride, y_stride;
    };
    // The fixture's k_b (16 → 32, queries of 24 with a rope tail of 8, absorbed rows of 40) and
    // v_b (32 → 16), V3-like k_b (128 → 512 of 192 / 576) and v_b (512 → 128) on fewer heads.
    const Shape shapes[] = {{16, 32, 4, 24, 40}, {32, 16, 4, 32, 16}, {128, 512, 8, 192, 576}, {512, 128, 8, 512, 128}};
    for (TensorType type : {TensorType::F16, TensorType::Q8_0, TensorType::BF16}) {
        for (const Shape& s : shapes) {
            if (!gpu::gpu_supports_rows(type, s.n_in)) continue;  // Q8_0: whole 32-value blocks
            HostWeight w = make_weight(type, s.n_in, s.n_out, s.n_head, rng);
            const gpu::DeviceWeight dw = to_device(w);
            for (int64_t n : {1, 5, 40}) {
                const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * s.n_head * s.x_stride));
                std::vector<float> y0 = random_floats(rng, static_cast<size_t>(n * s.n_head * s.y_stride));
                // The CPU block's per_head_matmul: each head's rows gathered, cpu_matmul, scattered.
                std::vector<float> want_cpu = y0;
                std::vector<float> a(static_cast<size_t>(n * s.n_in)), b(static_cast<size_t>(n * s.n_out));
                for (int64_t h = 0; h < s.n_head; ++h) {
                    for (int64_t t = 0; t < n; ++t) {
                        std::copy_n(x.data() + (t * s.n_head + h) * s.x_stride, s.n_in, a.data() + t * s.n_in);
                    }
                    cpu_matmul(w.view, h, a.data(), n, b.data(), cpu);
                    for (int64_t t = 0; t < n; ++t) {
                        std::copy_n(b.data() + t * s.n_out, s.n_out, want_cpu.data() + (t * s.n_head + h) * s.y_stride);
                    }
                }
                const int tile = gpu::gpu_moe_tile_columns(n * s.n_head, s.n_head, dw, dw);
                const bool f16 = tile == gpu::kGpuTiledColumns && gpu::gpu_tiled_matmul_f16(dw, ctx());
                const std::vector<float> exact = exact_heads(w, x, s.x_stride, n, s.n_head, f16);

                float* dy = to_device(y0);
                const gpu::MoePlan plan = gpu::gpu_head_plan(n, s.n_head, tile, 0, ctx());
                gpu::gpu_matmul_heads(dw, plan, to_device(x), s.x_stride, dy, s.y_stride, 3, ctx());
                const std::vector<float> got = from_device(dy, y0.size());

                // Only the output columns of each row are written: the rest keeps its values.
                std::vector<float> got_out, want_out, exact_out;
                bool rest_kept = true;
                for (int64_t p = 0; p < n * s.n_head; ++p) {
                    for (int64_t o = 0; o < s.y_stride; ++o) {
                        const size_t i = static_cast<size_t>(p * s.y_stride + o);
                        if (o < s.n_out) {
                            got_out.push_back(got[i]);
                            want_out.push_back(want_cpu[i]);
                            exact_out.push_back(exact[static_cast<size_t>(p * s.n_out + o)]);
                        } else {
                            rest_kept = rest_kept && got[i] == y0[i];
                        }
                    }
                }
                EXPECT_TRUE(rest_kept) << "gpu_matmul_heads wrote past the output columns";
                const std::string name = fmt::format("matmul_heads {} [{}, {}]x{} strides {}/{} n={} tiles of {}{}",
                                                     tensor_type_name(type), s.n_in, s.n_out, s.n_head, s.x_stride,
                                                     s.y_stride, n, tile, f16 ? " (f16 tensor cores)" : "");
                // As the dense matmul's parity: the CPU quantizes activations to the dot type.
                EXPECT_NMSE(name + " vs cpu", got_out, want_out, 5e-4);
                EXPECT_NMSE(name + " vs exact", got_out, exact_out, 1e-10);
            }
        }
    }
}

TEST_F(GpuDeepseekOps, CopyRowsMovesOnlyTheWidth) {
    std::mt19937 rng(33);
    const int64_t rows = 37, width = 24, src_stride = 40, dst_stride = 56;
    const std::vector<float> src = random_floats(rng, static_cast<size_t>(rows * src_stride));
    std::vector<float> dst = random_floats(rng, static_cast<size_t>(rows * dst_stride));
    float* d_dst = to_device(dst);
    gpu::gpu_copy_rows(to_device(src), src_stride, d_dst, dst_stride, rows, width, ctx());
    for (int64_t r = 0; r < rows; ++r) std::copy_n(src.data() + r * src_stride, width, dst.data() + r * dst_stride);
    EXPECT_NMSE("copy_rows", from_device(d_dst, dst.size()), dst, 0.0);
}

// The rope tables the model uses: the plain frequencies, and V3's YaRN (factor 40 over 4096
// positions), in both pair layouts.
std::vector<std::pair<std::string, RopeTable>> mla_rope_tables(int64_t rope_dims) {
    const YarnParams yarn{40.0f, 4096, 32.0f, 1.0f, 1.0f, true};
    return {{"plain", rope_table_default(RopeStyle::Normal, rope_dims, 10000.0f)},
            {"yarn", rope_table_yarn(RopeStyle::Normal, rope_dims, 10000.0f, yarn)},
            {"yarn neox", rope_table_yarn(RopeStyle::Neox, rope_dims, 10000.0f, yarn)}};
}

gpu::GpuRope device_rope(const RopeTable& t, int64_t head_dim, const double* inv_freq) {
    gpu::GpuRope rope{t.style == RopeStyle::Neox, head_dim, t.rope_dims, 10000.0f};
    rope.inv_freq = inv_freq;
    rope.attn_factor = t.attn_factor;
    return rope;
}

// The roped tail of each query head into the absorbed query, as mla_attention_block: rope the
// query's last r dims (cpu_rope_table at offset nope), copy them after the latent.
TEST_F(GpuDeepseekOps, QueryTailRopedIntoAbsorbedQuery) {
    std::mt19937 rng(34);
    struct Shape {
        int64_t n_head, dk, r, lora;
    };
    for (const Shape s : {Shape{4, 24, 8, 32}, Shape{16, 192, 64, 512}}) {
        for (const auto& [table_name, table] : mla_rope_tables(s.r)) {
            const std::vector<int32_t> positions = {0, 1, 7, 4095, 30000, 163839};
            const int64_t n = static_cast<int64_t>(positions.size()), latent_k = s.lora + s.r;
            std::vector<float> q = random_floats(rng, static_cast<size_t>(n * s.n_head * s.dk));
            std::vector<float> qa = random_floats(rng, static_cast<size_t>(n * s.n_head * latent_k));
            const float* d_q = to_device(q);
            float* d_qa = to_device(qa);
            std::vector<double> freq = table.inv_freq;
            gpu::gpu_mla_q_rope_absorb(d_q, n, s.n_head, s.dk, s.lora, device_rope(table, s.dk, to_device(freq)),
                                       to_device(positions), d_qa, ctx());
            EXPECT_EQ(from_device(d_q, q.size()), q) << "the query itself must stay as it was";
            cpu_rope_table(q.data() + (s.dk - s.r), n, s.n_head, s.dk, table, positions.data());
            for (int64_t p = 0; p < n * s.n_head; ++p) {
                std::copy_n(q.data() + p * s.dk + (s.dk - s.r), s.r, qa.data() + p * latent_k + s.lora);
            }
            // cos/sin of the device's libm vs the host's, in double; the latent part is untouched.
            EXPECT_NMSE(fmt::format("mla_q_rope_absorb heads {} dk {} rope {} {}", s.n_head, s.dk, s.r, table_name),
                        from_device(d_qa, qa.size()), qa, 1e-12);
        }
    }
}

// One sequence's kv_a rows: the latent normed, the key roped, each row in the cache at its
// (device) position — positions out of order, as a cache that is written sparsely.
TEST_F(GpuDeepseekOps, KvRowsNormedRopedAndStored) {
    std::mt19937 rng(35);
    struct Shape {
        int64_t lora, r;
    };
    for (const Shape s : {Shape{32, 8}, Shape{512, 64}}) {
        for (const auto& [table_name, table] : mla_rope_tables(s.r)) {
            for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) {
                const std::vector<int32_t> positions = {5, 0, 63, 17, 2};
                const int64_t n = static_cast<int64_t>(positions.size()), width = s.lora + s.r, n_ctx = 64;
                std::vector<float> kva = random_floats(rng, static_cast<size_t>(n * width), 3.0f);
                const std::vector<float> norm = random_floats(rng, static_cast<size_t>(s.lora));
                float* d_kva = to_device(kva);
                std::string error;
                gpu::GpuKvCache cache(pool(), 2, n_ctx, width, s.lora, type, &error);
                ASSERT_TRUE(cache.ok()) << error;
                std::vector<double> freq = table.inv_freq;
                gpu::gpu_mla_kv_norm_rope_store(d_kva, n, s.lora, to_device(norm), 1e-6f,
                                                device_rope(table, width, to_device(freq)), to_device(positions), cache, 1,
                                                ctx());
                for (int64_t t = 0; t < n; ++t) {
                    cpu_rms_norm(kva.data() + t * width, norm.data(), 1, s.lora, 1e-6f, kva.data() + t * width);
                }
                cpu_rope_table(kva.data() + s.lora, n, 1, width, table, positions.data());
                const std::string name = fmt::format("mla_kv_norm_rope_store latent {} rope {} {} {} cache", s.lora,
                                                     s.r, table_name, type == KvCacheType::F16 ? "f16" : "f32");
                EXPECT_NMSE(name + " rows", from_device(d_kva, kva.size()), kva, 1e-12);

                const auto read = [&](void* p, int64_t count) {
                    std::vector<float> out(static_cast<size_t>(count));
                    if (type == KvCacheType::F32) return from_device(static_cast<const float*>(p), out.size());
                    const std::vector<uint16_t> h = from_device(static_cast<const uint16_t*>(p), out.size());
                    for (size_t i = 0; i < h.size(); ++i) out[i] = fp16_to_fp32(h[i]);
                    return out;
                };
                const std::vector<float> keys = read(cache.keys(1), n_ctx * width);
                const std::vector<float> values = read(cache.values(1), n_ctx * s.lora);
                std::vector<float> got_k, want_k, got_v, want_v;
                const auto stored = [&](float v) { return type == KvCacheType::F16 ? fp16_to_fp32(fp32_to_fp16(v)) : v; };
                for (int64_t t = 0; t < n; ++t) {
                    const int64_t pos = positions[static_cast<size_t>(t)];
                    for (int64_t i = 0; i < width; ++i) {
                        got_k.push_back(keys[static_cast<size_t>(pos * width + i)]);
                        want_k.push_back(stored(kva[static_cast<size_t>(t * width + i)]));
                    }
                    for (int64_t i = 0; i < s.lora; ++i) {
                        got_v.push_back(values[static_cast<size_t>(pos * s.lora + i)]);
                        want_v.push_back(stored(kva[static_cast<size_t>(t * width + i)]));
                    }
                }
                // A value an ulp off before the f16 rounding may round to the neighbouring half.
                const double limit = type == KvCacheType::F16 ? 1e-7 : 1e-12;
                EXPECT_NMSE(name + " keys", got_k, want_k, limit);
                EXPECT_NMSE(name + " values", got_v, want_v, limit);
            }
        }
    }
}

}  // namespace
}  // namespace strata::test

#endif  // STRATA_HAS_GPU
