// The KV cache's storage: rows converted to its element type on store, only attention layers
// given rows, and what it allocates equal to what the memory planner reserved for it
// (plan/allocations.h: context_memory), for every fixture architecture and both element types.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/fp16.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "plan/allocations.h"
#include "support/testdata.h"

namespace strata {
namespace {

TEST(KvCache, F16RowsAreTheRoundedFloats) {
    KvCache kv(2, 4, 3, 2, KvCacheType::F16);
    const float k[3] = {1.0f, 0.1f, -65504.0f}, v[2] = {3.14159265f, 1e-6f};
    kv.store(1, 2, k, v);
    const auto* kh = static_cast<const uint16_t*>(kv.key_row(1, 2));
    const auto* vh = static_cast<const uint16_t*>(kv.value_row(1, 2));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(kh[i], fp32_to_fp16(k[i])) << i;
    for (int i = 0; i < 2; ++i) EXPECT_EQ(vh[i], fp32_to_fp16(v[i])) << i;
    EXPECT_EQ(fp16_to_fp32(kh[0]), 1.0f);
    EXPECT_NEAR(fp16_to_fp32(kh[1]), 0.1f, 0.1f / 2048);  // half keeps 11 significant bits
    // Neighbouring rows are untouched (zero from allocation).
    EXPECT_EQ(static_cast<const uint16_t*>(kv.key_row(1, 1))[2], 0u);
    EXPECT_EQ(static_cast<const uint16_t*>(kv.key_row(1, 3))[0], 0u);
}

TEST(KvCache, F32RowsAreKeptExactly) {
    KvCache kv(1, 2, 2, 2);
    EXPECT_EQ(kv.type(), KvCacheType::F32);
    const float k[2] = {0.1f, -7.25f}, v[2] = {1e-30f, 3.0f};
    kv.store(0, 1, k, v);
    EXPECT_EQ(std::memcmp(kv.keys(0, 1), k, sizeof k), 0);
    EXPECT_EQ(std::memcmp(kv.values(0, 1), v, sizeof v), 0);
}

TEST(KvCache, F16HalvesTheBytes) {
    EXPECT_EQ(KvCache(3, 10, 8, 4, KvCacheType::F32).bytes(), 3u * 10 * (8 + 4) * 4);
    EXPECT_EQ(KvCache(3, 10, 8, 4, KvCacheType::F16).bytes(), 3u * 10 * (8 + 4) * 2);
}

TEST(KvCache, OnlyMaskedLayersGetRows) {
    // Layers 0-2 recurrent, 3 attention, 4-6 recurrent, 7 attention: qwen3next's pattern.
    std::vector<bool> attention(8, false);
    attention[3] = attention[7] = true;
    KvCache kv(attention, 5, 4, 4, KvCacheType::F16);
    EXPECT_EQ(kv.n_stored_layers(), 2);
    EXPECT_EQ(kv.bytes(), 2u * 5 * (4 + 4) * 2);
    EXPECT_FALSE(kv.has_layer(0));
    EXPECT_TRUE(kv.has_layer(3));
    EXPECT_TRUE(kv.has_layer(7));
    EXPECT_FALSE(kv.has_layer(8));
    // The two attention layers have rows of their own.
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    kv.store(3, 0, a, a);
    kv.store(7, 0, b, b);
    EXPECT_EQ(static_cast<const uint16_t*>(kv.key_row(3, 0))[0], fp32_to_fp16(1.0f));
    EXPECT_EQ(static_cast<const uint16_t*>(kv.key_row(7, 0))[0], fp32_to_fp16(5.0f));
}

// What a model's cache (and recurrent state) allocates is what the planner reserved: the same
// layers (attention layers only in hybrids), the same row sizes, per element type.
class KvCacheOfModel : public ::testing::TestWithParam<std::string> {};

TEST_P(KvCacheOfModel, AllocatesWhatThePlannerReserved) {
    const std::string path = test::model_fixture_stem(GetParam()) + ".gguf";
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    const ModelConfig& cfg = (*model)->config();
    const int64_t n_ctx = 37;
    for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16, KvCacheType::Q8_0}) {
        SCOPED_TRACE(kv_type_name(type));
        if (!kv_type_fits(type, cfg.head_dim_k, cfg.head_dim_v)) continue;  // q8_0 needs 32-value heads
        (*model)->set_kv_type(type);
        const KvCache kv = (*model)->make_kv_cache(n_ctx);
        const ContextMemory planned = context_memory(cfg, n_ctx, type);
        EXPECT_EQ(kv.type(), type);
        EXPECT_EQ(kv.n_stored_layers(), static_cast<int64_t>(planned.attention_layers));
        EXPECT_EQ(kv.bytes(), planned.kv_bytes);
        for (uint32_t il = 0; il < cfg.n_layer; ++il) EXPECT_EQ(kv.has_layer(il), !cfg.is_recurrent_layer(il)) << il;
        EXPECT_EQ((*model)->make_recurrent_state().bytes(), planned.recurrent_bytes);
    }
    if (cfg.full_attention_interval > 0) {
        EXPECT_LT(context_memory(cfg, n_ctx, KvCacheType::F32).attention_layers, cfg.n_layer)
            << "a hybrid fixture should have recurrent layers";
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, KvCacheOfModel,
                         ::testing::Values("llama", "qwen3", "qwen3moe", "mixtral", "deepseek3", "gptoss", "qwen3next",
                                           "qwen35moe", "project:qwen4exp"),
                         [](const auto& param_info) { return test::model_fixture_label(param_info.param); });

}  // namespace

TEST(KvRowBytes, EachType) {
    EXPECT_EQ(kv_row_bytes(KvCacheType::F32, 32), 128);
    EXPECT_EQ(kv_row_bytes(KvCacheType::F16, 32), 64);
    EXPECT_EQ(kv_row_bytes(KvCacheType::Q8_0, 32), 34);  // one block
    EXPECT_EQ(kv_row_bytes(KvCacheType::Q8_0, 40), 68);  // a partial block still takes a block
    EXPECT_EQ(kv_row_bytes(KvCacheType::Q8_0, 512), 544);
}

TEST(KvCacheType, NamesRoundTripAndUnknownIsAnError) {
    for (auto t : {KvCacheType::F32, KvCacheType::F16, KvCacheType::Q8_0}) {
        auto back = parse_kv_type(kv_type_name(t));
        ASSERT_TRUE(back);
        EXPECT_EQ(*back, t);
    }
    auto bad = parse_kv_type("q4_0");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.status().message().find("expected f16, f32 or q8_0"), std::string::npos);
    EXPECT_FALSE(parse_kv_type("int8")) << "no engine cache stores int8 with per-head scales";
}

}  // namespace strata
