// The CPU attention over a q8_0 KV cache: rows are stored with ggml's reference quantizer and read
// back through its dequantizer, so the attention equals, bit for bit, that of an f32 cache holding
// the dequantized values (GQA, a prompt batch, a sliding window with sinks, MLA's 576/512 latent
// rows); and the quantization moves the output about as little as 8-bit blocks allow.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/attention_cache_cases.h"
#include "core/nmse.h"
#include "core/thread_pool.h"
#include "quant/legacy.h"

namespace strata {
namespace {

// What a q8_0 cache keeps of a row, as floats.
void round_to_q8_0(std::vector<float>& row) {
    std::vector<uint8_t> blocks(static_cast<size_t>(kv_row_bytes(KvCacheType::Q8_0, static_cast<int64_t>(row.size()))));
    quantize_row_q8_0(row.data(), blocks.data(), static_cast<int64_t>(row.size()));
    dequantize_row_q8_0(blocks.data(), row.data(), static_cast<int64_t>(row.size()));
}

std::vector<test::AttentionCase> cases() {
    static const float sinks[4] = {0.5f, -1.0f, 2.0f, 0.0f};
    std::vector<test::AttentionCase> out;
    out.push_back({{4, 2, 64, 64, 0.125f}, 1, 200});      // a deep decode step, GQA 4:2
    out.push_back({{4, 2, 32, 32, 0.17f}, 70, 0});        // a prompt batch
    test::AttentionCase sw{{4, 2, 64, 32, 0.25f}, 9, 130};                // window and sinks, narrower values
    sw.p.sinks = sinks;
    sw.p.sliding_window = 70;
    out.push_back(sw);
    out.push_back({{4, 1, 576, 512, 0.05f}, 3, 90});      // MLA's latent rows: one kv head
    return out;
}

TEST(CpuAttentionQ8, SameAsF32OfTheDequantizedValues) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    for (const test::AttentionCase& c : cases()) {
        const std::vector<float> q8 = test::attend(c, KvCacheType::Q8_0, nullptr, ctx);
        const std::vector<float> f32 = test::attend(c, KvCacheType::F32, round_to_q8_0, ctx);
        ASSERT_EQ(q8.size(), f32.size());
        EXPECT_EQ(std::memcmp(q8.data(), f32.data(), q8.size() * sizeof(float)), 0)
            << "n_tokens " << c.n_tokens << " pos0 " << c.pos0 << " head dims " << c.p.head_dim_k << "/" << c.p.head_dim_v;
    }
}

TEST(CpuAttentionQ8, CloseToTheF32Cache) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    for (const test::AttentionCase& c : cases()) {
        const std::vector<float> q8 = test::attend(c, KvCacheType::Q8_0, nullptr, ctx);
        const std::vector<float> f32 = test::attend(c, KvCacheType::F32, nullptr, ctx);
        // 8-bit blocks of normal values round by up to ~1/254 of the block's largest magnitude
        // (~3σ): a relative error around 1e-2 per element, ~1e-4 squared; the softmax averages it.
        EXPECT_LT(normalized_mse(q8, f32), 1e-3) << "n_tokens " << c.n_tokens << " pos0 " << c.pos0;
        EXPECT_GT(normalized_mse(q8, f32), 0.0) << "the q8_0 cache did not quantize";
    }
}

TEST(CpuAttentionQ8, RowsAreWholeBlocks) {
    EXPECT_EQ(kv_row_bytes(KvCacheType::Q8_0, 128), 4 * 34);
    EXPECT_TRUE(kv_type_fits(KvCacheType::Q8_0, 128, 64));
    EXPECT_FALSE(kv_type_fits(KvCacheType::Q8_0, 48, 64));
    EXPECT_TRUE(kv_type_fits(KvCacheType::F16, 48, 44));
    KvCache kv(2, 5, 64, 32, KvCacheType::Q8_0);
    EXPECT_EQ(kv.bytes(), 2u * 5 * (2 + 1) * 34);
}

}  // namespace
}  // namespace strata
