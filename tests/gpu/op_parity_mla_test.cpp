// GPU multi-head latent attention (gpu_attention_mla, DeepSeek-V2/V3) vs the CPU reference: the
// same cache rows (f32, and f16-rounded for the f16 cache) through cpu_attention with one KV head
// of keys [latent | rope] and values [latent] (see op_parity.h). Decode steps over deep caches
// (split-K and the merge, slices empty at shallow depths, a capacity past the depth), prompts from
// position 0 and continuing a cache, a captured step replayed at other depths, and the shapes the
// op refuses. Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "backend/cpu/attention.h"
#include "core/fp16.h"
#include "core/thread_pool.h"

#if STRATA_HAS_GPU
#include "backend/gpu/gpu_ops_mla.h"
#endif

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

struct MlaShape {
    const char* name;
    int64_t n_head, lora, rope;
    float scale;
};
// DeepSeek-V3 (its softmax scale 1/sqrt(128 + 64)), a mid-sized model with narrower rows (its
// last 64-dim key chunk half full), the tiny fixture's dims, and odd ones: heads that do not
// divide a block's 32 rows with a latent not a multiple of 64, and no rope at all.
const MlaShape kDeepSeekV3{"deepseek-v3", 128, 512, 64, 0.0721688f};
const MlaShape kMid{"mid", 16, 256, 32, 1.0f / std::sqrt(288.0f)};
const MlaShape kTiny{"tiny", 4, 32, 8, 1.0f / std::sqrt(40.0f)};
const MlaShape kOddHeads{"odd heads", 5, 96, 16, 1.0f / std::sqrt(112.0f)};
const MlaShape kNoRope{"no rope", 3, 64, 0, 0.125f};

// Token t of the batch sits at position pos0 + t (cache rows 0 .. pos0 + n_tokens − 1 are filled);
// n_ctx > 0 gives the device cache more rows than that: the split follows the capacity.
struct MlaCase {
    int64_t n_tokens, pos0;
    int64_t n_ctx = 0;
};

class GpuMla : public GpuOpTest {
protected:
    // Random rows for positions [0, n_kv), rounded to f16 when the cache is f16 so that the
    // reference reads exactly what the device cache holds.
    struct Rows {
        std::vector<float> keys, values;
    };
    Rows random_rows(const MlaShape& s, int64_t n_kv, KvCacheType type) {
        Rows r{random_floats(rng_, static_cast<size_t>(n_kv * (s.lora + s.rope))),
               random_floats(rng_, static_cast<size_t>(n_kv * s.lora))};
        if (type == KvCacheType::F16) {
            for (float& v : r.keys) v = fp16_to_fp32(fp32_to_fp16(v));
            for (float& v : r.values) v = fp16_to_fp32(fp32_to_fp16(v));
        }
        return r;
    }

    // cpu_attention over the first n_kv rows: one KV head, keys lora + rope wide, values lora.
    std::vector<float> cpu_reference(const MlaShape& s, const Rows& rows, int64_t n_kv, const std::vector<float>& q,
                                     int64_t n_tokens, int64_t pos0) {
        const int64_t k_dim = s.lora + s.rope;
        KvCache kv(1, n_kv, k_dim, s.lora);
        std::copy(rows.keys.begin(), rows.keys.begin() + n_kv * k_dim, kv.keys(0, 0));
        std::copy(rows.values.begin(), rows.values.begin() + n_kv * s.lora, kv.values(0, 0));
        const AttentionParams p{s.n_head, 1, k_dim, s.lora, s.scale};
        std::vector<float> want(static_cast<size_t>(n_tokens * s.n_head * s.lora));
        cpu_attention(q.data(), kv, 0, n_tokens, pos0, p, want.data(), cpu_);
        return want;
    }

    gpu::GpuMlaParams params(const MlaShape& s) { return {s.n_head, s.lora, s.rope, s.scale}; }

    void expect_matches_cpu(const MlaShape& s, const MlaCase& c, KvCacheType type) {
        const int64_t n_kv = c.pos0 + c.n_tokens, k_dim = s.lora + s.rope;
        const Rows rows = random_rows(s, n_kv, type);
        const std::vector<float> q = random_floats(rng_, static_cast<size_t>(c.n_tokens * s.n_head * k_dim));
        const std::vector<float> want = cpu_reference(s, rows, n_kv, q, c.n_tokens, c.pos0);

        std::string error;
        gpu::GpuKvCache cache(pool(), 1, std::max(c.n_ctx, n_kv), k_dim, s.lora, type, &error);
        ASSERT_TRUE(cache.ok()) << error;
        gpu::gpu_kv_store(to_device(rows.keys), to_device(rows.values), n_kv, 0, cache, 0, ctx());
        std::vector<int32_t> positions(static_cast<size_t>(c.n_tokens));
        std::iota(positions.begin(), positions.end(), static_cast<int32_t>(c.pos0));
        float* out = device_zeros<float>(want.size());
        gpu::gpu_attention_mla(to_device(q), cache, 0, c.n_tokens, to_device(positions), params(s), out, ctx());
        // Only the summation order differs from the reference (both read the same rounded rows),
        // as in the other attention tests.
        EXPECT_NMSE(fmt::format("attention_mla {} {} heads {}+{} n={} pos0={}{}", type == KvCacheType::F16 ? "f16" : "f32",
                                s.name, s.n_head, s.lora, s.rope, c.n_tokens, c.pos0,
                                c.n_ctx ? fmt::format(" ctx {}", c.n_ctx) : ""),
                    from_device(out, want.size()), want, 1e-10);
    }

    std::mt19937 rng_{23};

private:
    // The DeepSeek-V3 prompts are tens of GFLOP on the CPU: every hardware thread, no spinning
    // (the host waits on the GPU in between).
    ThreadPool threads_{ThreadPool::Options{.threads = 0, .spin_us = 0}};

protected:
    CpuContext cpu_{threads_};
};

// One to four query tokens over caches 1 .. 3000 deep: a block per 32 (token, head) rows and
// slice of keys, then the merge. The slices follow the capacity (9000 rows), so a shallow step
// leaves most of them empty and the merge must skip them; the tokens of a step see different
// depths, so a slice can hold keys that only the later tokens see.
TEST_F(GpuMla, DecodeMatchesCpuAtDepths) {
    const MlaCase cases[] = {
        {1, 0},           // depth 1: the only key is the token's own
        {1, 6},           // depth 7
        {3, 4},           // three tokens ending at depth 7
        {1, 299},         // depth 300
        {4, 296},         // four tokens (speculative verify)
        {1, 2999},        // depth 3000
        {2, 2998},
        {1, 2999, 9000},  // capacity three times the depth
        {4, 296, 9000},
        {1, 6, 9000},     // shallow in a large cache: one slice holds every key
    };
    for (const MlaShape& s : {kDeepSeekV3, kMid, kTiny, kOddHeads}) {
        for (const MlaCase& c : cases) {
            for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) expect_matches_cpu(s, c, type);
        }
    }
}

// Prompt batches, causal, from position 0 and continuing a cache. 300 DeepSeek-V3 tokens are
// 1200 row tiles (each block covers all its rows' keys: no split); the small shapes' few tiles
// split the keys as decode does, and a 64-row cache gives a single slice whatever the shape.
TEST_F(GpuMla, PromptsMatchCpu) {
    const MlaCase cases[] = {
        {5, 0}, {5, 1000}, {64, 0}, {64, 0, 64}, {64, 700}, {300, 0}, {300, 500},
    };
    for (const MlaShape& s : {kDeepSeekV3, kMid, kTiny, kOddHeads, kNoRope}) {
        for (const MlaCase& c : cases) {
            for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) expect_matches_cpu(s, c, type);
        }
    }
}

// A one-token step captured as a graph replays at other depths: the depth is read on the device,
// and nothing of the launch (grid, scratch) may depend on the depth it was captured at.
TEST_F(GpuMla, DecodeGraphReplaysAtOtherDepths) {
    for (const MlaShape& s : {kDeepSeekV3, kTiny}) {
        const int64_t n_ctx = 9000, k_dim = s.lora + s.rope;
        const Rows rows = random_rows(s, n_ctx, KvCacheType::F16);
        const std::vector<float> q = random_floats(rng_, static_cast<size_t>(s.n_head * k_dim));
        std::string error;
        gpu::GpuKvCache cache(pool(), 1, n_ctx, k_dim, s.lora, KvCacheType::F16, &error);
        ASSERT_TRUE(cache.ok()) << error;
        gpu::gpu_kv_store(to_device(rows.keys), to_device(rows.values), n_ctx, 0, cache, 0, ctx());
        const float* dq = to_device(q);
        int32_t* position = to_device(std::vector<int32_t>{2999});
        const size_t n_out = static_cast<size_t>(s.n_head * s.lora);
        float* out = device_zeros<float>(n_out);

        // As the decode graph does: one eager step settles the scratch, then the capture.
        gpu::gpu_attention_mla(dq, cache, 0, 1, position, params(s), out, ctx());
        ctx().synchronize();
        const uint64_t generation = ctx().scratch_generation();
        gpu::GpuGraph graph;
        ASSERT_TRUE(graph.begin_capture(ctx().stream(), &error)) << error;
        gpu::gpu_attention_mla(dq, cache, 0, 1, position, params(s), out, ctx());
        ASSERT_TRUE(graph.end_capture(ctx().stream(), &error)) << error;
        EXPECT_EQ(ctx().scratch_generation(), generation) << "the scratch moved while capturing";

        for (const int32_t depth : {8999, 2999, 100, 0}) {
            const std::vector<int32_t> host_position{depth};
            ctx().upload(position, host_position.data(), sizeof(int32_t));
            graph.launch(ctx().stream());
            const std::vector<float> got = from_device(out, n_out);
            const std::vector<float> want = cpu_reference(s, rows, depth + 1, q, 1, depth);
            EXPECT_NMSE(fmt::format("attention_mla graph replay f16 {} ctx 9000 at pos {}", s.name, depth), got, want,
                        1e-10);
        }
    }
}

// A q8_0 cache: the rows of earlier steps already stored (gpu_kv_store quantizes them), the step's
// rows written to the staging copy in f16 as the model's store kernel (gpu_mla_kv_norm_rope_store)
// writes them. The attention quantizes those, whose bytes must equal the CPU's q8_0 rows of the
// same (f16-rounded) values, and reads every row back through the copy. Reference: cpu_attention
// over the CPU's q8_0 cache; the copy holds d·q in f16 where the CPU reads it in f32.
TEST_F(GpuMla, Q8CacheMatchesTheCpuQ8Cache) {
    const MlaCase cases[] = {{1, 0}, {1, 2999}, {4, 296, 9000}, {5, 0}, {64, 700}};
    for (const MlaShape& s : {kDeepSeekV3, kMid, kNoRope}) {
        for (const MlaCase& c : cases) {
            const int64_t n_kv = c.pos0 + c.n_tokens, k_dim = s.lora + s.rope;
            const Rows rows = random_rows(s, n_kv, KvCacheType::F16);
            const std::vector<float> q = random_floats(rng_, static_cast<size_t>(c.n_tokens * s.n_head * k_dim));
            KvCache kv(1, n_kv, k_dim, s.lora, KvCacheType::Q8_0);
            for (int64_t pos = 0; pos < n_kv; ++pos) {
                kv.store(0, pos, rows.keys.data() + pos * k_dim, rows.values.data() + pos * s.lora);
            }
            std::vector<float> want(static_cast<size_t>(c.n_tokens * s.n_head * s.lora));
            cpu_attention(q.data(), kv, 0, c.n_tokens, c.pos0, AttentionParams{s.n_head, 1, k_dim, s.lora, s.scale},
                          want.data(), cpu_);

            std::string error;
            gpu::GpuKvCache cache(pool(), 1, std::max(c.n_ctx, n_kv), k_dim, s.lora, KvCacheType::Q8_0, &error);
            ASSERT_TRUE(cache.ok()) << error;
            if (c.pos0 > 0) gpu::gpu_kv_store(to_device(rows.keys), to_device(rows.values), c.pos0, 0, cache, 0, ctx());
            const auto f16_rows = [](const std::vector<float>& v, int64_t first, int64_t count) {
                std::vector<uint16_t> h(static_cast<size_t>(count));
                for (int64_t i = 0; i < count; ++i) h[static_cast<size_t>(i)] = fp32_to_fp16(v[static_cast<size_t>(first + i)]);
                return h;
            };
            const std::vector<uint16_t> new_keys = f16_rows(rows.keys, c.pos0 * k_dim, c.n_tokens * k_dim);
            const std::vector<uint16_t> new_values = f16_rows(rows.values, c.pos0 * s.lora, c.n_tokens * s.lora);
            ctx().upload(static_cast<uint16_t*>(cache.keys(0)) + c.pos0 * k_dim, new_keys.data(), new_keys.size() * 2);
            ctx().upload(static_cast<uint16_t*>(cache.values(0)) + c.pos0 * s.lora, new_values.data(), new_values.size() * 2);
            std::vector<int32_t> positions(static_cast<size_t>(c.n_tokens));
            std::iota(positions.begin(), positions.end(), static_cast<int32_t>(c.pos0));
            float* out = device_zeros<float>(want.size());
            gpu::gpu_attention_mla(to_device(q), cache, 0, c.n_tokens, to_device(positions), params(s), out, ctx());
            const std::string name = fmt::format("attention_mla q8_0 {} heads {} rows {}+{} n={} pos0={}{}", s.name, s.n_head,
                                                 s.lora, s.rope, c.n_tokens, c.pos0,
                                                 c.n_ctx ? fmt::format(" ctx {}", c.n_ctx) : "");
            EXPECT_NMSE(name, from_device(out, want.size()), want, 1e-6);

            const uint64_t k_row = static_cast<uint64_t>(kv_row_bytes(KvCacheType::Q8_0, k_dim));
            const uint64_t v_row = static_cast<uint64_t>(kv_row_bytes(KvCacheType::Q8_0, s.lora));
            const std::vector<uint8_t> keys = from_device(static_cast<const uint8_t*>(cache.stored_keys(0)),
                                                          static_cast<size_t>(n_kv * k_row));
            const std::vector<uint8_t> values = from_device(static_cast<const uint8_t*>(cache.stored_values(0)),
                                                            static_cast<size_t>(n_kv * v_row));
            int64_t differ = 0;
            for (int64_t pos = 0; pos < n_kv; ++pos) {
                const auto* k_cpu = static_cast<const uint8_t*>(kv.key_row(0, pos));
                const auto* v_cpu = static_cast<const uint8_t*>(kv.value_row(0, pos));
                for (uint64_t i = 0; i < k_row; ++i) differ += keys[static_cast<size_t>(pos * k_row + i)] != k_cpu[i];
                for (uint64_t i = 0; i < v_row; ++i) differ += values[static_cast<size_t>(pos * v_row + i)] != v_cpu[i];
            }
            EXPECT_EQ(differ, 0) << name << ": stored bytes differ from the CPU's q8_0 rows";
        }
    }
}

// Rows the kernels cannot stage (dims not a multiple of 8, wider than the limits) and a cache of
// another shape are refused at the entry, with the reason.
TEST_F(GpuMla, RefusesUnsupportedShapes) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // a child of its own, not a fork of a GPU process
    std::string error;
    const auto run = [&](int64_t lora, int64_t rope, int64_t cache_k, int64_t cache_v) {
        gpu::GpuKvCache cache(pool(), 1, 16, cache_k, cache_v, KvCacheType::F32, &error);
        float* q = device_zeros<float>(static_cast<size_t>(4 * (lora + rope)));
        float* out = device_zeros<float>(static_cast<size_t>(4 * lora));
        const int32_t* positions = to_device(std::vector<int32_t>{0});
        gpu::gpu_attention_mla(q, cache, 0, 1, positions, {4, lora, rope, 1.0f}, out, ctx());
        ctx().synchronize();
    };
    EXPECT_DEATH(run(36, 8, 44, 36), "kv_lora_rank must be a multiple of 8");
    EXPECT_DEATH(run(1024, 64, 1088, 1024), "kv_lora_rank must be a multiple of 8 in \\[8, kGpuMaxMlaLatent");
    EXPECT_DEATH(run(32, 12, 44, 32), "rope_dims must be a multiple of 8");
    EXPECT_DEATH(run(32, 128, 160, 32), "rope_dims must be a multiple of 8 in \\[0, kGpuMaxMlaRope");
    EXPECT_DEATH(run(32, 8, 48, 32), "the cache rows must be kv_lora_rank \\+ rope_dims");
}

#endif

}  // namespace
}  // namespace strata::test
