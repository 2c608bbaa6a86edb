// The planner's inputs: byte totals of a tensor list and the formulas of what the engine allocates
// besides the weights, checked against numbers worked out by hand (toy_model.h lists the model).
#include <gtest/gtest.h>

#include "plan/allocations.h"
#include "plan/model_bytes.h"
#include "toy_model.h"

namespace strata {
namespace {

ModelWeights toy_weights() {
    auto w = summarize_weights(test::toy_inventory());
    EXPECT_TRUE(w) << w.status().message();
    return w ? *w : ModelWeights{};
}

TEST(ModelWeights, ToyTotalsBySumsOfTheTensorList) {
    ModelWeights w = toy_weights();
    EXPECT_EQ(w.total_bytes, 65088u);
    EXPECT_EQ(w.dense_bytes, 40704u);
    EXPECT_EQ(w.embedding_bytes, 6400u);
    EXPECT_FALSE(w.embedding_is_output);
    EXPECT_EQ(w.dense_vram_bytes(), 34304u);
    EXPECT_EQ(w.dense_host_bytes(), 6400u);
    EXPECT_EQ(w.expert_bytes, 24384u);
    EXPECT_EQ(w.moe_layers, 2u);
    EXPECT_EQ(w.experts_per_layer, 4u);
    EXPECT_EQ(w.expert_count, 8u);
    EXPECT_EQ(w.expert_slot_bytes, 3072u);  // 1024 + 1024 + 1000 rounded up to 1024
    EXPECT_FALSE(w.has_dense_ffn);
    // A token: dense but the embedding 34304, one embedding row 64, 2 of 4 experts in 2 layers at
    // 24384 / 8 = 3048 each: 12192.
    EXPECT_EQ(w.expert_bytes_per_token, 12192u);
    EXPECT_EQ(w.bytes_per_token, 34304u + 64u + 12192u);
}

TEST(ModelWeights, TiedEmbeddingIsTheHeadAndStaysOnTheGpu) {
    ModelInventory inv = test::toy_inventory();
    inv.tensors.pop_back();  // output.weight
    auto w = summarize_weights(inv);
    ASSERT_TRUE(w);
    EXPECT_TRUE(w->embedding_is_output);
    EXPECT_EQ(w->dense_vram_bytes(), 40704u - 6400u);  // all dense, embedding included
    EXPECT_EQ(w->dense_host_bytes(), 0u);
    EXPECT_EQ(w->bytes_per_token, 27904u + 6400u + 12192u);  // the whole table is read as the head
}

TEST(ModelWeights, DenseModelHasNoExperts) {
    auto w = summarize_weights(test::toy_inventory(false));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->expert_count, 0u);
    EXPECT_EQ(w->expert_slot_bytes, 0u);
    EXPECT_TRUE(w->has_dense_ffn);
    EXPECT_EQ(w->dense_bytes, 50944u);  // 2 · 18944 + 6400 + 256 + 6400
    EXPECT_EQ(w->total_bytes, 50944u);
}

TEST(ModelWeights, ExpertTensorThatDisagreesWithTheConfigIsNamed) {
    ModelInventory inv = test::toy_inventory();
    inv.config.n_expert = 3;
    auto w = summarize_weights(inv);
    ASSERT_FALSE(w);
    EXPECT_NE(w.status().message().find("blk.0.ffn_gate_exps.weight"), std::string::npos) << w.status().message();
    EXPECT_NE(w.status().message().find("3 experts"), std::string::npos) << w.status().message();
}

TEST(ContextMemory, ToyKvCache) {
    // 2 layers × 100 positions × (32 keys + 32 values) × 2 bytes = 25600.
    ContextMemory m = context_memory(test::toy_config(), 100, KvCacheType::F16);
    EXPECT_EQ(m.attention_layers, 2u);
    EXPECT_EQ(m.recurrent_layers, 0u);
    EXPECT_EQ(m.kv_bytes_per_token, 256u);
    EXPECT_EQ(m.kv_bytes, 25600u);
    EXPECT_EQ(m.recurrent_bytes, 0u);
    EXPECT_EQ(m.kv_staging_bytes, 0u);
    const ContextMemory q8 = context_memory(test::toy_config(), 100, KvCacheType::Q8_0);
    EXPECT_EQ(q8.kv_bytes, 2u * 100 * 68);
    EXPECT_EQ(q8.kv_staging_bytes, 100u * 128);  // one layer's 64 values a position in f16
    EXPECT_EQ(q8.total(), 2u * 100 * 68 + 100u * 128);
}

TEST(ContextMemory, HybridStackCountsOnlyAttentionLayersAndAddsTheRecurrentState) {
    ModelConfig c = test::toy_config();
    c.arch = Arch::Qwen3Next;
    c.n_layer = 4;
    c.full_attention_interval = 4;  // layers 0, 1, 2 DeltaNet; layer 3 attention
    c.ssm_conv_kernel = 4;
    c.ssm_d_state = 8;
    c.ssm_n_group = 2;
    c.ssm_dt_rank = 4;
    c.ssm_d_inner = 32;
    ContextMemory m = context_memory(c, 100, KvCacheType::F16);
    EXPECT_EQ(m.attention_layers, 1u);
    EXPECT_EQ(m.recurrent_layers, 3u);
    EXPECT_EQ(m.kv_bytes, 100u * 128);
    // conv channels 2·2·8 + 32 = 64; conv window 3 × 64 = 192 floats; state 8 × 32 = 256 floats;
    // 448 floats = 1792 bytes per layer, × 3 layers.
    EXPECT_EQ(m.recurrent_bytes, 5376u);
}

TEST(Workspace, ToyMoeBatchOfEight) {
    ModelWeights w = toy_weights();
    Workspace ws = device_workspace(test::toy_config(), w, 8, false);
    // activations: 8 · (3 · 64 · 4 + 2 · 64) — widest matmul input is 64 (n_embd, q_dim)
    EXPECT_EQ(ws.activations, 7168u);
    // attention: 8 · (2·4·16 + 32 + 32 + 4·16) · 4 = 8192, plus scores 8 · 4 heads · 256 · 4 = 32768
    EXPECT_EQ(ws.attention, 40960u);
    // ffn: 8 · (4 router logits + 2 · (2·32 + 64)) · 4 = 8320, plus sort 8 · 2 pairs · 16 = 256
    EXPECT_EQ(ws.ffn, 8576u);
    // 8 · 100 · 4 = 3200, plus the GPU's sampling buffers: 32 + 100 · (8 + 8 + 4) = 2032
    EXPECT_EQ(ws.logits, 5232u);
    EXPECT_EQ(ws.expert_staging, 0u);
    EXPECT_EQ(ws.total(), 61936u);
    // Experts off the GPU: two buffers of 2 slots of 3072.
    Workspace staged = device_workspace(test::toy_config(), w, 8, true);
    EXPECT_EQ(staged.expert_staging, 12288u);
    EXPECT_EQ(staged.total(), 74224u);
}

TEST(Workspace, ToyHost) {
    ModelWeights w = toy_weights();
    // Beside a GPU: expert workers 8 · (64 · 6 + 2 · (2·32 + 64) · 4) = 11264, embedding rows
    // 8 · 64 · 4 = 2048, sampler 100 · 12 = 1200.
    EXPECT_EQ(host_workspace(test::toy_config(), w, 8, true), 14512u);
    // Alone: the whole forward's workspace (without the GPU's sampling buffers) plus the sampler.
    EXPECT_EQ(host_workspace(test::toy_config(), w, 8, false), 61936u - 2032u + 1200u);
}

TEST(Workspace, GrowsWithTheBatchAndNotWithTheContext) {
    ModelWeights w = toy_weights();
    const ModelConfig c = test::toy_config();
    // Everything but the sampling buffers (one row's reduction) is per token.
    const uint64_t sampling = 32 + 100 * 20;
    EXPECT_EQ(device_workspace(c, w, 16, false).total() - sampling, 2 * (device_workspace(c, w, 8, false).total() - sampling));
}

}  // namespace
}  // namespace strata
