// GPU attention over the device KV cache (f32 and f16: the rows kernel, split-K decode and its
// graph replay at other depths, flash prompt tiles) and the MoE ops (routing, the expert-sorted
// plan, grouped expert matmuls, combine) vs the CPU references (see op_parity.h). Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "backend/cpu/attention.h"
#include "backend/cpu/ops.h"
#include "backend/gpu/gpu_ops_attention_mma.h"
#include "core/fp16.h"
#include "core/thread_pool.h"
#include "model/blocks/blocks.h"
#include "model/blocks/moe_routing.h"

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

// One attention case for the helper below: cache positions [0, pos0 + n_tokens) hold random rows
// and the batch's queries sit at pos0 ..; n_ctx > 0 gives the device cache more capacity than that
// (split attention with positions on the device cuts its work by capacity, not depth).
struct AttentionCase {
    int64_t n_head, n_head_kv, hd_k, hd_v, n_tokens, pos0;
    int64_t window = 0;
    bool sinks = false;
    int64_t n_ctx = 0;
};

// Flash tiles on tensor cores round the scaled queries and the softmax weights to f16 (relative
// error at most 2^-11, rms ~2.8e-4 each; the sums stay f32). An output row is a weighted mean of
// value rows whose weights then carry about two such independent errors, so its NMSE against the
// f32 reference should be at most ~2 · (2.8e-4)² ≈ 2e-7 (measured on the H200: 3e-8 .. 8e-8);
// 1e-5 leaves room for peaked softmaxes, while a wrong fragment, mask or normalization costs 1e-3
// or more.
constexpr double kFlashMmaLimit = 1e-5;

class GpuAttention : public GpuOpTest {
protected:
    // The limit for a case the flash path takes: exact up to float summation order, unless an f16
    // cache runs on tensor cores (gpu_ops_attention_mma.h: heads up to 128 wide).
    double flash_limit(const AttentionCase& c, KvCacheType type) {
        const bool f16 = type == KvCacheType::F16;
        return f16 && gpu::gpu_attention_flash_mma(ctx()) && std::max(c.hd_k, c.hd_v) <= 128 ? kFlashMmaLimit : 1e-10;
    }

    // The limit for a decode case: exact up to float summation order, unless an f16 cache runs
    // decode on tensor cores (gpu_attention_decode_mma), with the prompt tiles' f16 rounding.
    double decode_limit(KvCacheType type) {
        return type == KvCacheType::F16 && gpu::gpu_attention_decode_mma(ctx()) ? kFlashMmaLimit : 1e-10;
    }

    // Runs the case through gpu_attention (positions on the host) and gpu_attention_at (positions
    // on the device) and compares both with cpu_attention over the same (f16-rounded) rows.
    void expect_matches_cpu(const AttentionCase& c, KvCacheType type, double limit) {
        const int64_t n_kv = c.pos0 + c.n_tokens, k_dim = c.n_head_kv * c.hd_k, v_dim = c.n_head_kv * c.hd_v;
        std::vector<float> keys = random_floats(rng_, static_cast<size_t>(n_kv * k_dim));
        std::vector<float> values = random_floats(rng_, static_cast<size_t>(n_kv * v_dim));
        const std::vector<float> q = random_floats(rng_, static_cast<size_t>(c.n_tokens * c.n_head * c.hd_k));
        const std::vector<float> sinks = random_floats(rng_, static_cast<size_t>(c.n_head), 2.0f);
        if (type == KvCacheType::F16) {
            for (float& v : keys) v = fp16_to_fp32(fp32_to_fp16(v));
            for (float& v : values) v = fp16_to_fp32(fp32_to_fp16(v));
        }
        KvCache kv(1, n_kv, k_dim, v_dim);
        std::copy(keys.begin(), keys.end(), kv.keys(0, 0));
        std::copy(values.begin(), values.end(), kv.values(0, 0));
        AttentionParams p{c.n_head, c.n_head_kv, c.hd_k, c.hd_v, 1.0f / std::sqrt(static_cast<float>(c.hd_k))};
        p.sliding_window = c.window;
        p.sinks = c.sinks ? sinks.data() : nullptr;
        std::vector<float> want(static_cast<size_t>(c.n_tokens * c.n_head * c.hd_v));
        cpu_attention(q.data(), kv, 0, c.n_tokens, c.pos0, p, want.data(), cpu_);

        std::string error;
        gpu::GpuKvCache cache(pool(), 1, std::max(c.n_ctx, n_kv), k_dim, v_dim, type, &error);
        ASSERT_TRUE(cache.ok()) << error;
        gpu::gpu_kv_store(to_device(keys), to_device(values), n_kv, 0, cache, 0, ctx());
        gpu::GpuAttentionParams gp;
        gp.n_head = c.n_head, gp.n_head_kv = c.n_head_kv, gp.head_dim_k = c.hd_k, gp.head_dim_v = c.hd_v;
        gp.scale = p.scale, gp.sliding_window = c.window, gp.sinks = c.sinks ? to_device(sinks) : nullptr;
        std::vector<int32_t> positions(static_cast<size_t>(c.n_tokens));
        std::iota(positions.begin(), positions.end(), static_cast<int32_t>(c.pos0));
        const float* dq = to_device(q);
        const std::string name =
            fmt::format("{} heads {}/{} dim {}/{} n={} pos0={}{}{}{}", type == KvCacheType::F16 ? "f16" : "f32",
                        c.n_head, c.n_head_kv, c.hd_k, c.hd_v, c.n_tokens, c.pos0,
                        c.window ? fmt::format(" window {}", c.window) : "", c.sinks ? " sinks" : "",
                        c.n_ctx ? fmt::format(" ctx {}", c.n_ctx) : "");
        float* out = device_zeros<float>(want.size());
        gpu::gpu_attention(dq, cache, 0, c.n_tokens, c.pos0, gp, out, ctx());
        EXPECT_NMSE("attention " + name, from_device(out, want.size()), want, limit);
        float* out_at = device_zeros<float>(want.size());
        gpu::gpu_attention_at(dq, cache, 0, c.n_tokens, to_device(positions), gp, out_at, ctx());
        EXPECT_NMSE("attention_at " + name, from_device(out_at, want.size()), want, limit);

        // Asked for its output as int8 too, a path that writes it must write the same bytes as
        // quantizing its float output afterwards (the rule of gpu_quantize_q8).
        const int64_t width = c.n_head * c.hd_v;
        if (width % 32 != 0) return;
        gpu::DeviceBuffer q8_buffer = pool().allocate(gpu::gpu_q8_bytes(c.n_tokens, width));
        const gpu::GpuQ8Rows q8 = gpu::gpu_q8_view(q8_buffer.data(), c.n_tokens, width);
        float* out_q = device_zeros<float>(want.size());
        if (!gpu::gpu_attention_at(dq, cache, 0, c.n_tokens, to_device(positions), gp, out_q, ctx(), &q8)) return;
        const std::vector<float> got = from_device(out_q, want.size());
        EXPECT_NMSE("attention_at int8 output " + name, got, want, limit);
        const HostQ8 expected = host_quantize(got);
        const std::vector<int8_t> bytes = from_device(q8.q, expected.q.size());
        int64_t differ = 0;
        for (size_t i = 0; i < bytes.size(); ++i) differ += bytes[i] != expected.q[i];
        EXPECT_EQ(differ, 0) << name;
        EXPECT_NMSE("attention_at int8 scales " + name, from_device(q8.ds, expected.ds.size()), expected.ds, 1e-14);
        ++int8_outputs_checked_;
    }
    int int8_outputs_checked_ = 0;

    std::mt19937 rng_{11};
    ThreadPool threads_{ThreadPool::Options{.threads = 2}};
    CpuContext cpu_{threads_};
};

TEST_F(GpuAttention, CausalGqaOverF32AndF16Cache) {
    struct Case { int64_t n_head, n_head_kv, hd_k, hd_v, n_tokens, pos0, window; bool sinks; };
    const Case cases[] = {
        {4, 2, 64, 64, 7, 5, 0, false},      // prefill continuing a cache
        {8, 8, 128, 128, 1, 300, 0, false},  // decode, one KV head per query head
        {32, 4, 128, 128, 3, 1000, 0, false},// Qwen3-30B-A3B's heads
        {4, 1, 256, 256, 5, 40, 0, false},   // one KV head, the largest head
        {6, 2, 64, 32, 4, 9, 0, false},      // value heads narrower than key heads
        {4, 2, 64, 64, 9, 30, 16, true},     // sliding window and sinks (gpt-oss)
    };
    ThreadPool threads(ThreadPool::Options{.threads = 2});
    CpuContext cpu(threads);
    std::mt19937 rng(6);
    for (const Case& c : cases) {
        for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) {
            const int64_t n_kv = c.pos0 + c.n_tokens, k_dim = c.n_head_kv * c.hd_k, v_dim = c.n_head_kv * c.hd_v;
            std::vector<float> keys = random_floats(rng, static_cast<size_t>(n_kv * k_dim));
            std::vector<float> values = random_floats(rng, static_cast<size_t>(n_kv * v_dim));
            const std::vector<float> q = random_floats(rng, static_cast<size_t>(c.n_tokens * c.n_head * c.hd_k));
            const std::vector<float> sinks = random_floats(rng, static_cast<size_t>(c.n_head));
            // The reference cache holds what the f16 cache holds, so only the kernel is compared.
            if (type == KvCacheType::F16) {
                for (float& v : keys) v = fp16_to_fp32(fp32_to_fp16(v));
                for (float& v : values) v = fp16_to_fp32(fp32_to_fp16(v));
            }
            KvCache kv(1, n_kv, k_dim, v_dim);
            std::copy(keys.begin(), keys.end(), kv.keys(0, 0));
            std::copy(values.begin(), values.end(), kv.values(0, 0));
            AttentionParams p{c.n_head, c.n_head_kv, c.hd_k, c.hd_v, 1.0f / std::sqrt(static_cast<float>(c.hd_k))};
            p.sliding_window = c.window;
            p.sinks = c.sinks ? sinks.data() : nullptr;
            std::vector<float> want(static_cast<size_t>(c.n_tokens * c.n_head * c.hd_v));
            cpu_attention(q.data(), kv, 0, c.n_tokens, c.pos0, p, want.data(), cpu);

            std::string error;
            gpu::GpuKvCache cache(pool(), 1, n_kv, k_dim, v_dim, type, &error);
            ASSERT_TRUE(cache.ok()) << error;
            gpu::gpu_kv_store(to_device(keys), to_device(values), n_kv, 0, cache, 0, ctx());
            gpu::GpuAttentionParams gp;
            gp.n_head = c.n_head, gp.n_head_kv = c.n_head_kv, gp.head_dim_k = c.hd_k, gp.head_dim_v = c.hd_v;
            gp.scale = p.scale, gp.sliding_window = c.window, gp.sinks = c.sinks ? to_device(sinks) : nullptr;
            float* out = device_zeros<float>(want.size());
            gpu::gpu_attention(to_device(q), cache, 0, c.n_tokens, c.pos0, gp, out, ctx());
            EXPECT_NMSE(fmt::format("attention {} heads {}/{} dim {}/{} n={} pos0={}{}{}",
                                    type == KvCacheType::F16 ? "f16" : "f32", c.n_head, c.n_head_kv, c.hd_k, c.hd_v,
                                    c.n_tokens, c.pos0, c.window ? " window" : "", c.sinks ? " sinks" : ""),
                        from_device(out, want.size()), want, decode_limit(type));
        }
    }
}

// One or a few query tokens over thousands of keys: split-K across blocks, then the merge. With
// positions on the device the slices follow the cache capacity (n_ctx), so shallow steps in a
// large cache leave most slices empty; those must not disturb the merge.
TEST_F(GpuAttention, DecodeSplitsLongCachesWithGqaWindowsAndSinks) {
    const AttentionCase cases[] = {
        {32, 4, 128, 128, 1, 2999},                      // Qwen3-30B-A3B's heads, 3000 keys
        {32, 4, 128, 128, 1, 8999},                      // 9000 keys
        {32, 4, 128, 128, 1, 2999, 0, false, 9000},      // capacity three times the depth
        {32, 4, 128, 128, 1, 40, 0, false, 9000},        // shallow: one slice holds every key
        {16, 2, 64, 64, 1, 8999, 4096, true},            // sliding window and sinks (gpt-oss)
        {16, 2, 64, 64, 1, 3000, 4096, true, 9000},      // window longer than the depth
        {8, 2, 128, 128, 1, 5000, 0, true},              // sinks alone
        {32, 4, 128, 128, 4, 3000},                      // a few tokens (speculative verify)
        {4, 1, 256, 256, 1, 3000},                       // one KV head, the largest head
        {6, 2, 64, 32, 2, 3001},                         // value heads narrower than key heads
    };
    for (const AttentionCase& c : cases) {
        for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) expect_matches_cpu(c, type, decode_limit(type));
    }
    EXPECT_GT(int8_outputs_checked_, 0) << "no split case wrote its output as int8";
}

// Grouped decode blocks (one per KV head, slice and token, all the KV head's query heads sharing
// K/V tiles in shared memory) over the shapes they take: 64- and 128-wide heads, heads padded up
// to the tile width, key and value heads of different widths, groups larger than a block's warps,
// slices ending inside a tile, shallow steps of one or two tiles and a few query tokens.
TEST_F(GpuAttention, DecodeGroupedTilesOverShapes) {
    const AttentionCase cases[] = {
        {32, 4, 64, 64, 1, 8999},                     // group of 8, 64-wide heads
        {32, 4, 64, 64, 4, 3000, 0, false, 9000},     // 4 tokens, positions on the device
        {32, 4, 128, 128, 4, 2999, 0, true, 9000},    // 4 tokens, sinks, capacity past the depth
        {32, 4, 128, 128, 1, 128},                    // 129 keys: three one-tile slices
        {32, 4, 128, 128, 1, 63, 0, false, 9000},     // one tile, most slices empty
        {40, 2, 128, 128, 1, 1000, 0, true},          // a group of 20: more heads than warps
        {24, 2, 80, 80, 1, 1300},                     // 80-wide heads padded to 128
        {12, 4, 32, 64, 2, 700, 256},                 // keys narrower than values, a window
        {16, 2, 64, 64, 3, 5000, 1000, true, 9000},   // window, sinks and several tokens
    };
    for (const AttentionCase& c : cases) {
        for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) expect_matches_cpu(c, type, decode_limit(type));
    }
}

// A decode step captured as a graph replays at other depths: the depth is read on the device, and
// nothing of the launch (grid, scratch) may depend on the depth it was captured at.
TEST_F(GpuAttention, DecodeGraphReplaysAtOtherDepths) {
    const int64_t n_ctx = 9000, n_head = 32, n_head_kv = 4, hd = 128, k_dim = n_head_kv * hd;
    std::vector<float> keys = random_floats(rng_, static_cast<size_t>(n_ctx * k_dim));
    std::vector<float> values = random_floats(rng_, static_cast<size_t>(n_ctx * k_dim));
    for (float& v : keys) v = fp16_to_fp32(fp32_to_fp16(v));
    for (float& v : values) v = fp16_to_fp32(fp32_to_fp16(v));
    const std::vector<float> q = random_floats(rng_, static_cast<size_t>(n_head * hd));
    const std::vector<float> sinks = random_floats(rng_, static_cast<size_t>(n_head), 2.0f);
    std::string error;
    gpu::GpuKvCache cache(pool(), 1, n_ctx, k_dim, k_dim, KvCacheType::F16, &error);
    ASSERT_TRUE(cache.ok()) << error;
    gpu::gpu_kv_store(to_device(keys), to_device(values), n_ctx, 0, cache, 0, ctx());
    gpu::GpuAttentionParams gp;
    gp.n_head = n_head, gp.n_head_kv = n_head_kv, gp.head_dim_k = hd, gp.head_dim_v = hd;
    gp.scale = 1.0f / std::sqrt(static_cast<float>(hd)), gp.sinks = to_device(sinks);
    const float* dq = to_device(q);
    int32_t* position = to_device(std::vector<int32_t>{2999});
    float* out = device_zeros<float>(static_cast<size_t>(n_head * hd));

    // As the decode graph does: one eager step settles the scratch, then the capture.
    gpu::gpu_attention_at(dq, cache, 0, 1, position, gp, out, ctx());
    ctx().synchronize();
    const uint64_t generation = ctx().scratch_generation();
    gpu::GpuGraph graph;
    ASSERT_TRUE(graph.begin_capture(ctx().stream(), &error)) << error;
    gpu::gpu_attention_at(dq, cache, 0, 1, position, gp, out, ctx());
    ASSERT_TRUE(graph.end_capture(ctx().stream(), &error)) << error;
    EXPECT_EQ(ctx().scratch_generation(), generation) << "the scratch moved while capturing";

    ThreadPool threads(ThreadPool::Options{.threads = 2});
    CpuContext cpu(threads);
    for (const int32_t depth : {8999, 2999, 100, 0}) {
        const std::vector<int32_t> host_position{depth};
        ctx().upload(position, host_position.data(), sizeof(int32_t));
        graph.launch(ctx().stream());
        const std::vector<float> got = from_device(out, static_cast<size_t>(n_head * hd));

        const int64_t n_kv = depth + 1;
        KvCache kv(1, n_kv, k_dim, k_dim);
        std::copy(keys.begin(), keys.begin() + n_kv * k_dim, kv.keys(0, 0));
        std::copy(values.begin(), values.begin() + n_kv * k_dim, kv.values(0, 0));
        AttentionParams p{n_head, n_head_kv, hd, hd, gp.scale};
        p.sinks = sinks.data();
        std::vector<float> want(got.size());
        cpu_attention(q.data(), kv, 0, 1, depth, p, want.data(), cpu);
        EXPECT_NMSE(fmt::format("attention graph replay f16 heads 32/4 dim 128 ctx 9000 at pos {}", depth), got, want,
                    decode_limit(KvCacheType::F16));
    }
}

// Prompt batches run in flash tiles (query tiles of 32 or 64 tokens over shared-memory key tiles),
// from position 0 and continuing a cache, with masks on the diagonal tile and sliding windows.
TEST_F(GpuAttention, PromptBatchesMatchCpuInFlashTiles) {
    const AttentionCase cases[] = {
        {32, 4, 128, 128, 512, 0},           // a prompt from the start, Qwen3-30B-A3B's heads
        {32, 4, 128, 128, 300, 700},         // a chunk continuing a cache; a partial last tile
        {16, 2, 64, 64, 600, 0, 128, true},  // sliding window and sinks (gpt-oss)
        {16, 2, 64, 64, 250, 400, 128, true},
        {8, 8, 64, 64, 200, 37},             // one KV head per query head
        {8, 2, 80, 80, 257, 5},              // head dim padded up to the 128-wide tiles
        {6, 2, 64, 32, 100, 20},             // value heads narrower than key heads
        {32, 4, 128, 128, 33, 4000},         // just enough tokens for a tile, deep in the cache
        {4, 1, 256, 256, 64, 10},            // 256-wide heads stay on the rows kernel
    };
    for (const AttentionCase& c : cases) {
        for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) expect_matches_cpu(c, type, flash_limit(c, type));
    }
}

// Prompt batches over an f16 cache on tensor cores (ops_attention_flash_mma.cu; the FMA tiles where
// the device has none, or with STRATA_GPU_FLASH_MMA=0). Blocks hold 64 (token, head) rows of one
// KV head's group: groups of 8 and 1, and groups that leave rows of a block idle (12: 5 tokens,
// 40: one token); batches of 32, 100 and 600 tokens from position 0 and continuing a cache, head
// dims 64 and 128 (80 padded up, values narrower than keys), windows and sinks.
// A q8_0 cache (GpuKvCache: stored as ggml's q8_0 blocks, read by attention through an f16 copy of
// the layer) against the CPU's q8_0 cache: the stored blocks byte for byte (the same values
// quantized the same way; the inputs are f16 values, as the GPU's store leaves them), and the
// attention output within the f16 copy's rounding of each d · q (the tensor-core limit). Decode,
// a few tokens, a prompt batch, windows with sinks, and positions on the device over a cache with
// room past the depth (a captured step's grid).
TEST_F(GpuAttention, Q8CacheMatchesTheCpuQ8Cache) {
    const AttentionCase cases[] = {
        {32, 4, 128, 128, 1, 2999},
        {32, 4, 128, 128, 4, 3000},
        {32, 4, 128, 128, 64, 100},
        {16, 2, 64, 64, 1, 3000, 1024, true},
        {8, 2, 128, 128, 1, 5000, 0, false, 9000},
        {12, 4, 32, 64, 2, 700},
    };
    for (const AttentionCase& c : cases) {
        const int64_t n_kv = c.pos0 + c.n_tokens, k_dim = c.n_head_kv * c.hd_k, v_dim = c.n_head_kv * c.hd_v;
        std::vector<float> keys = random_floats(rng_, static_cast<size_t>(n_kv * k_dim));
        std::vector<float> values = random_floats(rng_, static_cast<size_t>(n_kv * v_dim));
        for (float& v : keys) v = fp16_to_fp32(fp32_to_fp16(v));
        for (float& v : values) v = fp16_to_fp32(fp32_to_fp16(v));
        const std::vector<float> q = random_floats(rng_, static_cast<size_t>(c.n_tokens * c.n_head * c.hd_k));
        const std::vector<float> sinks = random_floats(rng_, static_cast<size_t>(c.n_head), 2.0f);
        KvCache kv(1, n_kv, k_dim, v_dim, KvCacheType::Q8_0);
        for (int64_t pos = 0; pos < n_kv; ++pos) kv.store(0, pos, keys.data() + pos * k_dim, values.data() + pos * v_dim);
        AttentionParams p{c.n_head, c.n_head_kv, c.hd_k, c.hd_v, 1.0f / std::sqrt(static_cast<float>(c.hd_k))};
        p.sliding_window = c.window;
        p.sinks = c.sinks ? sinks.data() : nullptr;
        std::vector<float> want(static_cast<size_t>(c.n_tokens * c.n_head * c.hd_v));
        cpu_attention(q.data(), kv, 0, c.n_tokens, c.pos0, p, want.data(), cpu_);

        std::string error;
        gpu::GpuKvCache cache(pool(), 1, std::max(c.n_ctx, n_kv), k_dim, v_dim, KvCacheType::Q8_0, &error);
        ASSERT_TRUE(cache.ok()) << error;
        EXPECT_EQ(cache.type(), KvCacheType::F16);  // what attention reads
        gpu::gpu_kv_store(to_device(keys), to_device(values), n_kv, 0, cache, 0, ctx());
        const std::string name = fmt::format("q8_0 heads {}/{} dim {}/{} n={} pos0={}{}{}", c.n_head, c.n_head_kv, c.hd_k,
                                             c.hd_v, c.n_tokens, c.pos0, c.window ? " window" : "", c.sinks ? " sinks" : "");
        const uint64_t k_row = static_cast<uint64_t>(kv_row_bytes(KvCacheType::Q8_0, k_dim));
        const std::vector<uint8_t> stored = from_device(static_cast<const uint8_t*>(cache.stored_keys(0)),
                                                        static_cast<size_t>(n_kv * k_row));
        int64_t differ = 0;
        for (int64_t pos = 0; pos < n_kv; ++pos) {
            const auto* cpu_row = static_cast<const uint8_t*>(kv.key_row(0, pos));
            for (uint64_t i = 0; i < k_row; ++i) differ += stored[static_cast<size_t>(pos * k_row + i)] != cpu_row[i];
        }
        EXPECT_EQ(differ, 0) << name << ": stored key bytes differ from the CPU's q8_0 rows";

        gpu::GpuAttentionParams gp;
        gp.n_head = c.n_head, gp.n_head_kv = c.n_head_kv, gp.head_dim_k = c.hd_k, gp.head_dim_v = c.hd_v;
        gp.scale = p.scale, gp.sliding_window = c.window, gp.sinks = c.sinks ? to_device(sinks) : nullptr;
        const float* dq = to_device(q);
        float* out = device_zeros<float>(want.size());
        gpu::gpu_attention(dq, cache, 0, c.n_tokens, c.pos0, gp, out, ctx());
        EXPECT_NMSE("attention " + name, from_device(out, want.size()), want, kFlashMmaLimit);
        std::vector<int32_t> positions(static_cast<size_t>(c.n_tokens));
        std::iota(positions.begin(), positions.end(), static_cast<int32_t>(c.pos0));
        float* out_at = device_zeros<float>(want.size());
        gpu::gpu_attention_at(dq, cache, 0, c.n_tokens, to_device(positions), gp, out_at, ctx());
        EXPECT_NMSE("attention_at " + name, from_device(out_at, want.size()), want, kFlashMmaLimit);
    }
}

TEST_F(GpuAttention, PromptBatchesOnTensorCores) {
    const AttentionCase cases[] = {
        {32, 4, 128, 128, 32, 0},               // Qwen3-30B-A3B's heads, the smallest flash batch
        {32, 4, 128, 128, 100, 700},            // a chunk continuing a cache
        {32, 4, 128, 128, 600, 0},              // a prompt from the start
        {32, 4, 128, 128, 600, 700},
        {32, 4, 64, 64, 100, 700},              // 64-wide heads, group of 8
        {8, 8, 128, 128, 100, 0},               // one KV head per query head: 64 tokens a block
        {8, 8, 64, 64, 600, 700},
        {32, 4, 128, 128, 600, 0, 200},         // a window alone
        {16, 2, 64, 64, 600, 700, 128, true},   // window and sinks (gpt-oss)
        {8, 2, 128, 128, 100, 0, 0, true},      // sinks alone
        {12, 1, 64, 64, 100, 3},                // a group of 12: 60 of 64 rows used
        {40, 1, 128, 128, 33, 50},              // a group of 40: one token per block
        {6, 2, 64, 32, 100, 20},                // value heads narrower than key heads
        {8, 2, 80, 80, 257, 5},                 // 80-wide heads padded up to 128
        {32, 4, 128, 128, 33, 4000},            // deep in the cache
    };
    for (const AttentionCase& c : cases) expect_matches_cpu(c, KvCacheType::F16, kFlashMmaLimit);
    std::printf("flash attention over f16 caches: %s\n",
                gpu::gpu_attention_flash_mma(ctx()) ? "tensor cores" : "FMA tiles (no sm_80+ or STRATA_GPU_FLASH_MMA=0)");
}

class GpuMoe : public GpuOpTest {};

// The CPU block's routing: softmax, top k by probability (lower index on ties), renormalized.
void cpu_route(const std::vector<float>& logits, int64_t n_tokens, int64_t n_exp, int64_t k, bool normalize,
               std::vector<int32_t>& ids, std::vector<float>& weights) {
    ids.assign(static_cast<size_t>(n_tokens * k), 0);
    weights.assign(static_cast<size_t>(n_tokens * k), 0.0f);
    std::vector<float> probs = logits;
    route_softmax_topk(probs.data(), n_tokens, n_exp, k, normalize, ids.data(), weights.data());
}

TEST_F(GpuMoe, SoftmaxTopkRouting) {
    std::mt19937 rng(7);
    struct Case { int64_t n_tokens, n_exp, k; bool normalize; };
    for (const Case c : {Case{37, 16, 4, true}, Case{5, 128, 8, true}, Case{9, 8, 2, false}, Case{3, 512, 10, true}}) {
        const std::vector<float> logits = random_floats(rng, static_cast<size_t>(c.n_tokens * c.n_exp), 2.0f);
        std::vector<int32_t> want_ids;
        std::vector<float> want_w;
        cpu_route(logits, c.n_tokens, c.n_exp, c.k, c.normalize, want_ids, want_w);
        int32_t* ids = device_zeros<int32_t>(want_ids.size());
        float* w = device_zeros<float>(want_w.size());
        gpu::gpu_moe_route_softmax_topk(to_device(logits), c.n_tokens, c.n_exp, c.k, c.normalize, ids, w, ctx());
        EXPECT_EQ(from_device(ids, want_ids.size()), want_ids) << c.n_exp << " experts, top " << c.k;
        EXPECT_NMSE(fmt::format("moe_route {} experts top {} n={}{}", c.n_exp, c.k, c.n_tokens,
                                c.normalize ? " renormalized" : ""),
                    from_device(w, want_w.size()), want_w, 1e-12);
    }
}

// A one-token step's router logits, routing and plan in one launch (the last block routes) equal
// the two-launch path: float matmul, then gpu_moe_route_plan_single. Run three times on one
// counter: the kernel must leave it ready for the next step.
TEST_F(GpuMoe, RouterAndRoutingInOneLaunch) {
    std::mt19937 rng(8);
    struct Case { TensorType type; int64_t n_in, n_exp, k; bool normalize; };
    for (const Case c : {Case{TensorType::F32, 2048, 128, 8, true}, Case{TensorType::F16, 512, 60, 4, false},
                         Case{TensorType::Q8_0, 256, 300, 10, true}}) {
        HostWeight router = make_weight(c.type, c.n_in, c.n_exp, 1, rng);
        const gpu::DeviceWeight dr = to_device(router);
        const float* h = to_device(random_floats(rng, static_cast<size_t>(c.n_in)));
        float* logits = device_zeros<float>(static_cast<size_t>(c.n_exp));
        int32_t* ids = device_zeros<int32_t>(static_cast<size_t>(c.k));
        float* w = device_zeros<float>(static_cast<size_t>(c.k));
        gpu::gpu_matmul(dr, 0, h, 1, logits, ctx());
        gpu::MoePlan plan = gpu::gpu_moe_route_plan_single(logits, c.n_exp, c.k, c.normalize, ids, w, 0, ctx());
        const std::vector<float> want_logits = from_device(logits, static_cast<size_t>(c.n_exp));
        const std::vector<int32_t> want_ids = from_device(ids, static_cast<size_t>(c.k));
        const std::vector<float> want_w = from_device(w, static_cast<size_t>(c.k));
        const std::vector<int32_t> want_tiles = from_device(plan.tiles, static_cast<size_t>(3 * c.k));

        unsigned* counter = device_zeros<unsigned>(1);
        for (int round = 0; round < 3; ++round) {
            float* logits2 = device_zeros<float>(static_cast<size_t>(c.n_exp));
            int32_t* ids2 = device_zeros<int32_t>(static_cast<size_t>(c.k));
            float* w2 = device_zeros<float>(static_cast<size_t>(c.k));
            const gpu::MoePlan plan2 =
                gpu::gpu_moe_router_route_plan_single(dr, h, logits2, c.k, c.normalize, ids2, w2, 4, counter, ctx());
            const std::string name = fmt::format("router+route one launch {} [{}, {}] top {} round {}", tensor_type_name(c.type),
                                                 c.n_in, c.n_exp, c.k, round);
            EXPECT_NMSE(name + " logits", from_device(logits2, want_logits.size()), want_logits, 1e-12);
            EXPECT_EQ(from_device(ids2, want_ids.size()), want_ids) << name;
            EXPECT_NMSE(name + " weights", from_device(w2, want_w.size()), want_w, 1e-12);
            EXPECT_EQ(from_device(plan2.tiles, want_tiles.size()), want_tiles) << name;
            EXPECT_EQ(from_device(plan2.n_tiles, 1)[0], c.k) << name;
            EXPECT_EQ(from_device(counter, 1)[0], 0u) << name << ": counter not reset";
        }
    }
}

// The whole MoE FFN (norm, router, routing, plan, gate/up/down per expert, combine) against the
// CPU block; 37 tokens × 4 of 16 experts puts ~9 pairs on an expert: several tiles per expert.
TEST_F(GpuMoe, FfnBlockMatchesCpu) {
    ThreadPool threads(ThreadPool::Options{.threads = 2});
    CpuContext cpu(threads);
    std::mt19937 rng(8);
    for (TensorType type : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K}) {
        for (int64_t n : {1, 37, 150}) {  // 150 tokens: wide tiles (gpu_moe_tile_columns), the tiled kernel
            const int64_t e = 256, ff = 256, n_exp = 16, k = 4;
            ModelConfig cfg;
            cfg.n_embd = e, cfg.n_expert = n_exp, cfg.n_expert_used = k, cfg.n_ff_expert = ff, cfg.rms_eps = 1e-6f;
            HostWeight norm = make_weight(TensorType::F32, e, 1, 1, rng);
            HostWeight router = make_weight(TensorType::F32, e, n_exp, 1, rng);
            HostWeight gate = make_weight(type, e, ff, n_exp, rng), up = make_weight(type, e, ff, n_exp, rng);
            HostWeight down = make_weight(type, ff, e, n_exp, rng);
            MoeFfnWeights w{norm.view, router.view, gate.view, up.view, down.view};
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * e));
            std::vector<float> want = x;
            Batch batch{nullptr, nullptr, n, 0};
            moe_ffn_block(w, cfg, want.data(), batch, cpu);

            const int64_t pairs = n * k;
            float* dx = to_device(x);
            float* h = device_zeros<float>(static_cast<size_t>(n * e));
            float* logits = device_zeros<float>(static_cast<size_t>(n * n_exp));
            int32_t* ids = device_zeros<int32_t>(static_cast<size_t>(pairs));
            float* weights = device_zeros<float>(static_cast<size_t>(pairs));
            float* g = device_zeros<float>(static_cast<size_t>(pairs * ff));
            float* u = device_zeros<float>(static_cast<size_t>(pairs * ff));
            float* o = device_zeros<float>(static_cast<size_t>(pairs * e));
            gpu::gpu_rms_norm(dx, to_device(norm).f32(), n, e, cfg.rms_eps, h, ctx());
            gpu::gpu_matmul(to_device(router), 0, h, n, logits, ctx());
            gpu::gpu_moe_route_softmax_topk(logits, n, n_exp, k, true, ids, weights, ctx());
            const int width = gpu::gpu_moe_tile_columns(pairs, n_exp, to_device(gate), to_device(down));
            EXPECT_EQ(width, n == 150 ? gpu::kGpuTiledColumns : gpu::kGpuMatmulColumns);
            const gpu::MoePlan plan = gpu::gpu_moe_plan(ids, pairs, n_exp, 0, ctx(), width);
            gpu::gpu_matmul_experts(to_device(gate), plan, h, k, g, ctx());
            gpu::gpu_matmul_experts(to_device(up), plan, h, k, u, ctx());
            gpu::gpu_swiglu(g, u, pairs * ff, ctx());
            gpu::gpu_matmul_experts(to_device(down), plan, g, 1, o, ctx());
            gpu::gpu_moe_combine(o, weights, n, k, e, dx, ctx());
            // The CPU block quantizes activations to the dot type of the expert weights, twice in
            // series (gate/up, then down on silu(g)·u, which unit-variance weights make heavy-tailed):
            // measured on the H200 1.3e-7 (F16) .. 3.9e-4 (Q4_K). A wrong expert or weight is O(1).
            EXPECT_NMSE(fmt::format("moe_ffn {} [{}, {}]x{} top {} n={} tiles of {}", tensor_type_name(type), e, ff, n_exp, k, n,
                                    width),
                        from_device(dx, want.size()), want, 2e-3);
        }
    }
}

#endif

}  // namespace
}  // namespace strata::test
