// The decode-step ops of gpu_ops.h (positions read on the device, fused passes) vs the CPU
// reference ops they stand for (see op_parity.h): q/k norm + rope + cache store, residual add +
// norm, MoE combine + norm, one-token routing with its plan, attention at device positions.
// Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <utility>

#include "backend/cpu/ops.h"
#include "core/fp16.h"
#include "core/tagged_words.h"
#include "experts/mapped_alias.h"

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

class GpuFused : public GpuOpTest {
protected:
    // The whole cache layer as floats (f16 widened).
    std::vector<float> read_cache(const void* p, int64_t n, KvCacheType type) {
        if (type == KvCacheType::F32) return from_device(static_cast<const float*>(p), static_cast<size_t>(n));
        const std::vector<uint16_t> bits = from_device(static_cast<const uint16_t*>(p), static_cast<size_t>(n));
        std::vector<float> out(bits.size());
        for (size_t i = 0; i < bits.size(); ++i) out[i] = fp16_to_fp32(bits[i]);
        return out;
    }
};

TEST_F(GpuFused, QkNormRopeStore) {
    struct Case { int64_t n_head, n_head_kv, head_dim, head_dim_v, rope_dims, n_tokens, pos0; RopeStyle style; bool norms; };
    const Case cases[] = {
        {32, 4, 128, 128, 128, 1, 77, RopeStyle::Neox, true},    // Qwen3-30B-A3B decode
        {32, 4, 128, 128, 128, 5, 3000, RopeStyle::Neox, true},  // a prompt chunk deep in the cache
        {4, 2, 64, 32, 32, 3, 0, RopeStyle::Normal, false},      // partial rope, no norms, narrow values
        {8, 8, 256, 256, 256, 2, 40000, RopeStyle::Neox, true},  // the largest head, far positions
    };
    std::mt19937 rng(11);
    const float eps = 1e-6f;
    for (const Case& c : cases) {
        for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16}) {
            const int64_t n = c.n_tokens, k_dim = c.n_head_kv * c.head_dim, v_dim = c.n_head_kv * c.head_dim_v;
            const int64_t n_ctx = c.pos0 + n;
            const std::vector<float> q = random_floats(rng, static_cast<size_t>(n * c.n_head * c.head_dim), 2.0f);
            const std::vector<float> k = random_floats(rng, static_cast<size_t>(n * k_dim), 2.0f);
            const std::vector<float> v = random_floats(rng, static_cast<size_t>(n * v_dim));
            const std::vector<float> q_norm = random_floats(rng, static_cast<size_t>(c.head_dim));
            const std::vector<float> k_norm = random_floats(rng, static_cast<size_t>(c.head_dim));
            std::vector<int32_t> positions(static_cast<size_t>(n));
            std::iota(positions.begin(), positions.end(), static_cast<int32_t>(c.pos0));

            std::vector<float> want_q = q, want_k = k;
            if (c.norms) {
                cpu_rms_norm(want_q.data(), q_norm.data(), n * c.n_head, c.head_dim, eps, want_q.data());
                cpu_rms_norm(want_k.data(), k_norm.data(), n * c.n_head_kv, c.head_dim, eps, want_k.data());
            }
            const RopeParams rp{c.style, c.head_dim, c.rope_dims, 1e6f};
            cpu_rope(want_q.data(), n, c.n_head, rp, positions.data());
            cpu_rope(want_k.data(), n, c.n_head_kv, rp, positions.data());
            std::vector<float> want_v = v;
            if (type == KvCacheType::F16) {  // the cache rounds what it stores
                for (float& x : want_k) x = fp16_to_fp32(fp32_to_fp16(x));
                for (float& x : want_v) x = fp16_to_fp32(fp32_to_fp16(x));
            }

            std::string error;
            gpu::GpuKvCache cache(pool(), 1, n_ctx, k_dim, v_dim, type, &error);
            ASSERT_TRUE(cache.ok()) << error;
            float* dq = to_device(q);
            gpu::gpu_qk_norm_rope_store(dq, to_device(k), to_device(v), n, c.n_head, c.norms ? to_device(q_norm) : nullptr,
                                        c.norms ? to_device(k_norm) : nullptr, eps,
                                        gpu::GpuRope{c.style == RopeStyle::Neox, c.head_dim, c.rope_dims, 1e6f},
                                        to_device(positions), cache, 0, ctx());
            const std::vector<float> keys = read_cache(cache.keys(0), n_ctx * k_dim, type);
            const std::vector<float> values = read_cache(cache.values(0), n_ctx * v_dim, type);
            const std::string what = fmt::format("{} heads {}/{} dim {}/{} rope {} n={} pos0={}{}",
                                                 type == KvCacheType::F16 ? "f16" : "f32", c.n_head, c.n_head_kv,
                                                 c.head_dim, c.head_dim_v, c.rope_dims, n, c.pos0, c.norms ? " normed" : "");
            EXPECT_NMSE("qk_norm_rope_store q " + what, from_device(dq, q.size()), want_q, 1e-11);
            EXPECT_NMSE("qk_norm_rope_store k " + what,
                        std::vector<float>(keys.begin() + c.pos0 * k_dim, keys.end()), want_k,
                        type == KvCacheType::F16 ? 1e-6 : 1e-11);  // a float ulp apart can round to neighbouring halves
            EXPECT_NMSE("qk_norm_rope_store v " + what,
                        std::vector<float>(values.begin() + c.pos0 * v_dim, values.end()), want_v, 0.0);
        }
    }
}

TEST_F(GpuFused, AddRmsNorm) {
    std::mt19937 rng(12);
    struct Shape { int64_t rows, n; bool weight; };
    // Rows held 1, 2 and 8 values a thread, and one too long to hold (walked).
    for (const Shape s : {Shape{1, 2048, true}, Shape{7, 1000, true}, Shape{3, 64, false}, Shape{2, 7168, true},
                          Shape{1, 9000, false}}) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.rows * s.n), 3.0f);
        const std::vector<float> y = random_floats(rng, x.size());
        const std::vector<float> w = random_floats(rng, static_cast<size_t>(s.n));
        std::vector<float> want_x = x, want(x.size());
        cpu_add(want_x.data(), y.data(), static_cast<int64_t>(x.size()));
        cpu_rms_norm(want_x.data(), s.weight ? w.data() : nullptr, s.rows, s.n, 1e-6f, want.data());
        float* dx = to_device(x);
        float* out = device_zeros<float>(x.size());
        gpu::gpu_add_rms_norm(dx, to_device(y), s.weight ? to_device(w) : nullptr, s.rows, s.n, 1e-6f, out, ctx());
        const std::string what = fmt::format("[{}, {}]{}", s.n, s.rows, s.weight ? "" : " no weight");
        EXPECT_NMSE("add_rms_norm x " + what, from_device(dx, x.size()), want_x, 0.0);
        EXPECT_NMSE("add_rms_norm out " + what, from_device(out, x.size()), want, 1e-11);
    }
}

// A kernel writing into mapped page-locked memory delivers the same bytes a copy would, at odd
// sizes and offsets too, and reads them back from there into device memory.
TEST_F(GpuFused, CopyWordsThroughHostMapping) {
    std::mt19937 rng(12);
    for (const int64_t words : {1, 7, 4096, 70001}) {
        const std::vector<float> values = random_floats(rng, static_cast<size_t>(words) + 3, 3.0f);
        const float* src = to_device(values);
        gpu::PinnedBuffer host;
        std::string error;
        ASSERT_TRUE(host.allocate(static_cast<uint64_t>(words + 3) * sizeof(float), &error)) << error;
        if (host.device_view() == nullptr) GTEST_SKIP() << "this runtime does not map page-locked memory";
        std::fill_n(host.as<float>(), words + 3, -1.0f);
        auto* view = static_cast<float*>(host.device_view());
        gpu::gpu_copy_words(view + 1, src + 2, static_cast<uint64_t>(words) * sizeof(float), ctx());
        ctx().synchronize();
        const float* got = host.as<float>();
        EXPECT_EQ(got[0], -1.0f);
        EXPECT_TRUE(std::equal(values.begin() + 2, values.begin() + 2 + words, got + 1)) << words << " words";
        EXPECT_EQ(got[words + 1], -1.0f);
        float* back = device_zeros<float>(static_cast<size_t>(words));
        gpu::gpu_copy_words(back, view + 1, static_cast<uint64_t>(words) * sizeof(float), ctx());
        const std::vector<float> round_trip = from_device(back, static_cast<size_t>(words));
        EXPECT_TRUE(std::equal(round_trip.begin(), round_trip.end(), values.begin() + 2)) << words << " words back";
    }
}

// The mapping's check (experts/mapped_alias.h) on this machine's runtime: Linux with CUDA maps
// page-locked memory coherently both ways, so the tiers keep every mapped path.
TEST_F(GpuFused, MappedAliasCheckPassesWhereTheRuntimeMaps) {
    gpu::PinnedBuffer probe;
    std::string error;
    ASSERT_TRUE(probe.allocate(64, &error)) << error;
    if (probe.device_view() == nullptr) GTEST_SKIP() << "this runtime does not map page-locked memory";
    const MappedAliasReport r = check_mapped_alias_on_device(ctx());
    EXPECT_TRUE(r.mapped_reads()) << r.describe();
    EXPECT_TRUE(r.host_polling()) << r.describe();
    EXPECT_TRUE(r.gpu_polling()) << r.describe();
}

// The flagged copy (the expert tiers' routing): once the host sees the flag's new value, both
// spans are there, before any synchronize; rounds reuse the buffers with growing values.
TEST_F(GpuFused, CopyWordsThenFlagShowsTheDataFirst) {
    std::mt19937 rng(14);
    gpu::PinnedBuffer host, flag;
    std::string error;
    ASSERT_TRUE(host.allocate(20000 * sizeof(float), &error)) << error;
    ASSERT_TRUE(flag.allocate(64, &error)) << error;
    if (host.device_view() == nullptr || flag.device_view() == nullptr) GTEST_SKIP() << "this runtime does not map page-locked memory";
    *flag.as<uint32_t>() = 0;
    auto* view = static_cast<float*>(host.device_view());
    uint32_t round = 0;
    for (const auto& [n0, n1] : {std::pair<int64_t, int64_t>{16, 2048}, {1, 1}, {4096, 7}, {16, 14000}, {0, 5}}) {
        ++round;
        const std::vector<float> a = random_floats(rng, static_cast<size_t>(n0) + 1);
        const std::vector<float> b = random_floats(rng, static_cast<size_t>(n1) + 1);
        const float* da = to_device(a);
        const float* db = to_device(b);
        std::fill_n(host.as<float>(), 20000, -1.0f);
        // The second span lands at an odd offset, after a gap.
        gpu::gpu_copy_words_then_flag(view, da, static_cast<uint64_t>(n0) * sizeof(float), view + n0 + 3, db,
                                      static_cast<uint64_t>(n1) * sizeof(float), static_cast<uint32_t*>(flag.device_view()),
                                      round, ctx());
        const std::atomic_ref<uint32_t> seen(*flag.as<uint32_t>());
        const auto start = std::chrono::steady_clock::now();
        while (seen.load(std::memory_order_acquire) != round) {
            ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "the flag never came";
        }
        const float* got = host.as<float>();
        EXPECT_TRUE(std::equal(a.begin(), a.begin() + n0, got)) << n0 << " + " << n1;
        EXPECT_EQ(got[n0], -1.0f);
        EXPECT_TRUE(std::equal(b.begin(), b.begin() + n1, got + n0 + 3)) << n0 << " + " << n1;
        EXPECT_EQ(got[n0 + 3 + n1], -1.0f);
        ctx().synchronize();
    }
}

// Tagged words (the expert tiers' decode): up, a kernel's pairs read by the host as they come;
// down, the host's pairs polled by a kernel that waits for the host's counter first, over buffers
// that still hold the last round's pairs. Every word's bits come through.
TEST_F(GpuFused, TaggedWordsCrossBothWays) {
    std::mt19937 rng(15);
    gpu::PinnedBuffer up, down, counter;
    std::string error;
    ASSERT_TRUE(up.allocate(20000 * sizeof(uint64_t), &error)) << error;
    ASSERT_TRUE(down.allocate(20000 * sizeof(uint64_t), &error)) << error;
    ASSERT_TRUE(counter.allocate(64, &error)) << error;
    if (up.device_view() == nullptr || down.device_view() == nullptr || counter.device_view() == nullptr) {
        GTEST_SKIP() << "this runtime does not map page-locked memory";
    }
    std::fill_n(up.as<uint64_t>(), 20000, 0);
    std::fill_n(down.as<uint64_t>(), 20000, 0);
    *counter.as<uint32_t>() = 0;
    uint32_t tag = 0;
    for (const auto& [n0, n1] : {std::pair<int64_t, int64_t>{16, 2048}, {1, 1}, {4096, 7}, {16, 14000}, {0, 5}}) {
        ++tag;
        const std::vector<float> a = random_floats(rng, static_cast<size_t>(n0) + 1);
        const std::vector<float> b = random_floats(rng, static_cast<size_t>(n1) + 1);
        gpu::gpu_copy_words_tagged(static_cast<uint64_t*>(up.device_view()), to_device(a), static_cast<uint64_t>(n0) * 4,
                                   to_device(b), static_cast<uint64_t>(n1) * 4, tag, ctx());
        std::vector<float> got(static_cast<size_t>(n0 + n1));
        const auto start = std::chrono::steady_clock::now();
        await_tagged_words(up.as<uint64_t>(), got.size(), tag, got.data(),
                           [&] { return std::chrono::steady_clock::now() - start > std::chrono::seconds(10); });
        EXPECT_TRUE(std::equal(a.begin(), a.begin() + n0, got.begin())) << n0 << " + " << n1;
        EXPECT_TRUE(std::equal(b.begin(), b.begin() + n1, got.begin() + n0)) << n0 << " + " << n1;
        ctx().synchronize();

        // Down: the kernel is queued before the host has written anything.
        const int64_t n = n0 + n1;
        const std::vector<float> c = random_floats(rng, static_cast<size_t>(n));
        float* dst = device_zeros<float>(static_cast<size_t>(n));
        const bool with_counter = tag % 2 == 1;
        gpu::gpu_await_tagged_words(static_cast<const uint64_t*>(down.device_view()), static_cast<uint64_t>(n), tag,
                                    with_counter ? static_cast<const uint32_t*>(counter.device_view()) : nullptr, tag, dst,
                                    ctx());
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        if (with_counter) std::atomic_ref<uint32_t>(*counter.as<uint32_t>()).store(tag, std::memory_order_release);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        // Backwards, so that a kernel taking the first word for the whole would read old ones.
        for (int64_t i = n; i-- > 0;) write_tagged_words(down.as<uint64_t>() + i, &c[static_cast<size_t>(i)], 1, tag);
        EXPECT_EQ(from_device(dst, static_cast<size_t>(n)), c) << n;
    }
}

// With an addend (the expert tiers' CPU lane result) x = (x + addend) + Σ w·out, as gpu_add then
// the combine.
TEST_F(GpuFused, MoeCombineRmsNorm) {
    std::mt19937 rng(13);
    struct Shape { int64_t n_tokens, k, n; bool addend; };
    for (const Shape s : {Shape{1, 8, 2048, false}, Shape{5, 4, 256, false}, Shape{1, 8, 2048, true}, Shape{3, 4, 256, true},
                          Shape{1, 8, 7168, true}, Shape{2, 3, 9000, false}}) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.n_tokens * s.n), 2.0f);
        const std::vector<float> expert_out = random_floats(rng, static_cast<size_t>(s.n_tokens * s.k * s.n));
        const std::vector<float> weights = random_floats(rng, static_cast<size_t>(s.n_tokens * s.k));
        const std::vector<float> norm = random_floats(rng, static_cast<size_t>(s.n));
        const std::vector<float> addend = random_floats(rng, x.size());
        std::vector<float> want_x = x, want(x.size());
        for (int64_t t = 0; t < s.n_tokens; ++t) {
            for (int64_t d = 0; d < s.n; ++d) {
                float sum = 0.0f;
                for (int64_t j = 0; j < s.k; ++j) sum += weights[t * s.k + j] * expert_out[(t * s.k + j) * s.n + d];
                if (s.addend) want_x[t * s.n + d] += addend[static_cast<size_t>(t * s.n + d)];
                want_x[t * s.n + d] += sum;
            }
        }
        cpu_rms_norm(want_x.data(), norm.data(), s.n_tokens, s.n, 1e-6f, want.data());
        float* dx = to_device(x);
        float* out = device_zeros<float>(x.size());
        gpu::gpu_moe_combine_rms_norm(to_device(expert_out), to_device(weights), s.n_tokens, s.k, s.n, dx, to_device(norm),
                                      1e-6f, out, ctx(), nullptr, s.addend ? to_device(addend) : nullptr);
        const std::string what = fmt::format("n={} top {} [{}]{}", s.n_tokens, s.k, s.n, s.addend ? " + addend" : "");
        EXPECT_NMSE("moe_combine_rms_norm x " + what, from_device(dx, x.size()), want_x, 1e-12);
        EXPECT_NMSE("moe_combine_rms_norm out " + what, from_device(out, x.size()), want, 1e-11);
    }
}

// The one-token routing equals gpu_moe_route_softmax_topk, and its plan lists each chosen expert
// as a tile of one pair.
TEST_F(GpuFused, RoutePlanSingle) {
    std::mt19937 rng(14);
    struct Case { int64_t n_exp, k; bool normalize; };
    for (const Case c : {Case{128, 8, true}, Case{16, 4, false}, Case{512, 10, true}}) {
        const std::vector<float> logits = random_floats(rng, static_cast<size_t>(c.n_exp), 2.0f);
        const float* dl = to_device(logits);
        int32_t* want_ids = device_zeros<int32_t>(static_cast<size_t>(c.k));
        float* want_w = device_zeros<float>(static_cast<size_t>(c.k));
        gpu::gpu_moe_route_softmax_topk(dl, 1, c.n_exp, c.k, c.normalize, want_ids, want_w, ctx());
        int32_t* ids = device_zeros<int32_t>(static_cast<size_t>(c.k));
        float* w = device_zeros<float>(static_cast<size_t>(c.k));
        const gpu::MoePlan plan = gpu::gpu_moe_route_plan_single(dl, c.n_exp, c.k, c.normalize, ids, w, 0, ctx());
        const std::vector<int32_t> got_ids = from_device(ids, static_cast<size_t>(c.k));
        EXPECT_EQ(got_ids, from_device(want_ids, static_cast<size_t>(c.k)));
        EXPECT_NMSE(fmt::format("moe_route_plan_single {} experts top {}", c.n_exp, c.k), from_device(w, static_cast<size_t>(c.k)),
                    from_device(want_w, static_cast<size_t>(c.k)), 0.0);
        ASSERT_EQ(plan.n_pairs, c.k);
        ASSERT_EQ(plan.max_tiles, c.k);
        EXPECT_EQ(from_device(plan.n_tiles, 1)[0], c.k);
        const std::vector<int32_t> tiles = from_device(plan.tiles, static_cast<size_t>(3 * c.k));
        const std::vector<int32_t> sorted = from_device(plan.sorted, static_cast<size_t>(c.k));
        for (int64_t j = 0; j < c.k; ++j) {
            EXPECT_EQ(tiles[3 * j], got_ids[j]);
            EXPECT_EQ(tiles[3 * j + 1], j);
            EXPECT_EQ(tiles[3 * j + 2], 1);
            EXPECT_EQ(sorted[j], j);
        }
    }
}

// Positions read on the device give what the host pos0 gives.
TEST_F(GpuFused, AttentionAtDevicePositions) {
    std::mt19937 rng(15);
    const int64_t n_head = 32, n_head_kv = 4, hd = 128, n_ctx = 600;
    for (const int64_t n : {int64_t{1}, int64_t{6}}) {
        const int64_t pos0 = n_ctx - n;
        std::string error;
        gpu::GpuKvCache cache(pool(), 1, n_ctx, n_head_kv * hd, n_head_kv * hd, KvCacheType::F16, &error);
        ASSERT_TRUE(cache.ok()) << error;
        const std::vector<float> kv = random_floats(rng, static_cast<size_t>(n_ctx * n_head_kv * hd));
        gpu::gpu_kv_store(to_device(kv), to_device(kv), n_ctx, 0, cache, 0, ctx());
        const std::vector<float> q = random_floats(rng, static_cast<size_t>(n * n_head * hd));
        std::vector<int32_t> positions(static_cast<size_t>(n));
        std::iota(positions.begin(), positions.end(), static_cast<int32_t>(pos0));
        gpu::GpuAttentionParams p;
        p.n_head = n_head, p.n_head_kv = n_head_kv, p.head_dim_k = hd, p.head_dim_v = hd, p.scale = 0.088f;
        float* want = device_zeros<float>(static_cast<size_t>(n * n_head * hd));
        float* got = device_zeros<float>(static_cast<size_t>(n * n_head * hd));
        const float* dq = to_device(q);
        gpu::gpu_attention(dq, cache, 0, n, pos0, p, want, ctx());
        gpu::gpu_attention_at(dq, cache, 0, n, to_device(positions), p, got, ctx());
        EXPECT_NMSE(fmt::format("attention_at n={} pos0={}", n, pos0), from_device(got, q.size()), from_device(want, q.size()), 0.0);
    }
}

#endif

}  // namespace
}  // namespace strata::test
