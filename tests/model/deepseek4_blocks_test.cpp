// deepseek4's new ops against their formulas (NEW_ARCHS.md §B1) on small inputs checked by hand
// or by the properties the formulas promise: Sinkhorn's doubly stochastic matrix, the mHC's
// collapse and expansion, the compressors' pooled, normalized and roped entries (and their
// running state across batches), the indexer's top-k, sqrt-softplus and hash routing, the clamp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/rope_table.h"
#include "core/thread_pool.h"
#include "model/blocks/kv_compressor.h"
#include "model/blocks/lightning_indexer.h"
#include "model/blocks/manifold_hyper_connection.h"
#include "model/blocks/moe_routing.h"

namespace strata {
namespace {

float sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// An F32 Weight over `v` with GGUF shape ne (row length first).
Weight f32_weight(const std::vector<float>& v, int64_t ne0, int64_t ne1 = 1) {
    Weight w;
    w.data = reinterpret_cast<const uint8_t*>(v.data());
    w.type = TensorType::F32;
    w.ne[0] = ne0, w.ne[1] = ne1;
    w.row_bytes = static_cast<uint64_t>(ne0) * sizeof(float);
    return w;
}

TEST(Deepseek4Sinkhorn, MakesTheMatrixDoublyStochastic) {
    const std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, 0.0f, 1.0f, -2.0f, 0.3f,
                                       4.0f, 0.1f, -0.7f, 1.2f, -3.0f, 2.2f, 0.9f, 0.0f};
    std::vector<float> c = logits;
    mhc_sinkhorn(c.data(), 4, 20, 1e-6f);
    for (int j = 0; j < 4; ++j) {
        float row = 0.0f, col = 0.0f;
        for (int k = 0; k < 4; ++k) row += c[j * 4 + k], col += c[k * 4 + j];
        EXPECT_NEAR(row, 1.0f, 1e-4f) << "row " << j;
        EXPECT_NEAR(col, 1.0f, 1e-5f) << "column " << j;  // the last step normalizes columns
    }
    // One iteration is the softmax over each row (+ eps), then the columns divided by their sums.
    std::vector<float> one = logits;
    mhc_sinkhorn(one.data(), 4, 1, 0.0f);
    std::vector<float> want(16);
    for (int j = 0; j < 4; ++j) {
        float z = 0.0f;
        for (int k = 0; k < 4; ++k) z += std::exp(logits[j * 4 + k]);
        for (int k = 0; k < 4; ++k) want[j * 4 + k] = std::exp(logits[j * 4 + k]) / z;
    }
    for (int k = 0; k < 4; ++k) {
        float col = 0.0f;
        for (int j = 0; j < 4; ++j) col += want[j * 4 + k];
        for (int j = 0; j < 4; ++j) EXPECT_NEAR(one[j * 4 + k], want[j * 4 + k] / col, 1e-6f);
    }
    // Equal logits: every entry 1/hc.
    std::vector<float> flat(16, 0.7f);
    mhc_sinkhorn(flat.data(), 4, 20, 1e-6f);
    for (float v : flat) EXPECT_NEAR(v, 0.25f, 1e-6f);
}

// hc = 2 streams of 2 values and a zero fn: the mixes are the base alone, so the weights are
// σ(base) + eps (pre), 2σ(base) (post) and, for an all-zero comb base, the same value everywhere:
// the v with v = v / (2v + eps), (1 − eps) / 2 (the eps in every divisor keeps sums below one).
TEST(Deepseek4Mhc, CollapsesAndExpandsTheStreamsAsTheFormulaSays) {
    ModelConfig cfg;
    cfg.hc_count = 2, cfg.n_embd = 2, cfg.rms_eps = 1e-6f;
    cfg.dsv4.hc_eps = 0.01f, cfg.dsv4.sinkhorn_iters = 20;
    const std::vector<float> fn(4 * 8, 0.0f), base = {0.5f, -1.0f, 2.0f, 0.0f, 0, 0, 0, 0}, scale = {3.0f, 3.0f, 3.0f};
    MhcWeights w{f32_weight(fn, 4, 8), f32_weight(base, 8), f32_weight(scale, 3)};
    const std::vector<float> X = {1.0f, 2.0f, -3.0f, 4.0f};  // stream 0: (1, 2), stream 1: (-3, 4)
    ThreadPool pool(ThreadPool::Options{.threads = 1});
    CpuContext ctx(pool);
    std::vector<float> x(2), post(2), comb(4);
    mhc_pre(w, cfg, X.data(), 1, x.data(), post.data(), comb.data(), ctx);
    const float p0 = sigmoid(0.5f) + 0.01f, p1 = sigmoid(-1.0f) + 0.01f;
    EXPECT_NEAR(x[0], p0 * 1.0f + p1 * -3.0f, 1e-6f);
    EXPECT_NEAR(x[1], p0 * 2.0f + p1 * 4.0f, 1e-6f);
    EXPECT_NEAR(post[0], 2.0f * sigmoid(2.0f), 1e-6f);
    EXPECT_NEAR(post[1], 1.0f, 1e-6f);
    for (float v : comb) EXPECT_NEAR(v, (1.0f - 0.01f) / 2.0f, 1e-5f);
    std::vector<float> Y = X;
    const std::vector<float> y = {10.0f, 20.0f};
    mhc_post(y.data(), post.data(), comb.data(), 1, cfg, Y.data());
    for (int k = 0; k < 2; ++k) {
        for (int i = 0; i < 2; ++i) {
            EXPECT_NEAR(Y[k * 2 + i], post[k] * y[i] + 0.495f * (X[i] + X[2 + i]), 1e-4f) << k << "," << i;
        }
    }
    // A non-symmetric comb is read as C[source, destination].
    const std::vector<float> c2 = {0.2f, 0.7f, 0.8f, 0.3f};
    std::vector<float> Z = X;
    const std::vector<float> no_post = {0.0f, 0.0f};
    mhc_post(y.data(), no_post.data(), c2.data(), 1, cfg, Z.data());
    EXPECT_NEAR(Z[0], 0.2f * 1.0f + 0.8f * -3.0f, 1e-6f);  // destination 0 takes 0.2 of 0 and 0.8 of 1
}

// HCA-shaped: ratio 2, entries of 4 with the last 2 roped. Equal gates pool the mean; window w
// is roped at position 2w (pair 0 of a rope of 2 dims turns by exactly the position).
TEST(Deepseek4Compressor, PoolsNormalizesAndRopesEachWindow) {
    const KvCompressorShape s{.ratio = 2, .dim = 4, .overlap = false};
    const std::vector<float> ape(2 * 4, 0.0f), norm = {1.0f, 1.0f, 1.0f, 2.0f};
    KvCompressorWeights w{{}, {}, f32_weight(ape, 4, 2), f32_weight(norm, 4)};
    const std::vector<float> kv = {1, 2, 3, 4, 3, 2, 1, 0, 0, 0, 2, 0, 0, 0, 0, 2}, gate(16, 0.5f);
    const RopeTable rope = rope_table_default(RopeStyle::Normal, 2, 10000.0f);
    std::vector<float> state(static_cast<size_t>(s.state_floats()), 0.0f), entries(8, -1.0f);
    kv_compressor_step(s, w, kv.data(), gate.data(), 4, 0, 0.0f, rope, state.data(),
                       [&](int64_t e) { return entries.data() + e * 4; });
    // Window 0: mean (2, 2, 2, 2), RMS 2 → (1, 1, 1, 2) after the norm's weight; position 0.
    EXPECT_NEAR(entries[0], 1.0f, 1e-6f);
    EXPECT_NEAR(entries[1], 1.0f, 1e-6f);
    EXPECT_NEAR(entries[2], 1.0f, 1e-6f);
    EXPECT_NEAR(entries[3], 2.0f, 1e-6f);
    // Window 1: mean (0, 0, 1, 1), RMS sqrt(1/2) → (0, 0, √2, 2√2), then turned by 2 radians.
    const float a = std::sqrt(2.0f), b = 2.0f * std::sqrt(2.0f);
    EXPECT_NEAR(entries[6], a * std::cos(2.0f) - b * std::sin(2.0f), 1e-5f);
    EXPECT_NEAR(entries[7], a * std::sin(2.0f) + b * std::cos(2.0f), 1e-5f);
    // A gate (here through the ape) picks its slot: softmax weights of e^20 against 1.
    const std::vector<float> ape2 = {0, 0, 0, 0, 20, 20, 20, 20};
    KvCompressorWeights w2{{}, {}, f32_weight(ape2, 4, 2), f32_weight(norm, 4)};
    std::vector<float> state2(state.size(), 0.0f), picked(8);
    kv_compressor_step(s, w2, kv.data(), gate.data(), 2, 0, 0.0f, rope, state2.data(),
                       [&](int64_t e) { return picked.data() + e * 4; });
    const float rms = std::sqrt((9.0f + 4.0f + 1.0f + 0.0f) / 4.0f);  // token 1's row (3, 2, 1, 0)
    EXPECT_NEAR(picked[0], 3.0f / rms, 1e-5f);
    EXPECT_NEAR(picked[3], 0.0f, 1e-5f);
}

// CSA-shaped: entry w pools Ca of window w − 1 and Cb of window w; window 0 has no Ca slots.
// Tokens fed one at a time (the state carried) give the entries of one call.
TEST(Deepseek4Compressor, OverlapsTheWindowsAndCarriesItsState) {
    const KvCompressorShape s{.ratio = 2, .dim = 2, .overlap = true};
    const std::vector<float> ape(2 * 4, 0.0f), norm = {1.0f, 1.0f};
    KvCompressorWeights w{{}, {}, f32_weight(ape, 4, 2), f32_weight(norm, 2)};
    // Token rows [Ca (2) | Cb (2)]; the gates make one slot win: token 0's Cb in window 0, token
    // 1's Ca (over window 1's Cb slots) in window 1.
    const std::vector<float> kv = {9, 9, 1, 0, 5, 7, 8, 8, 0, 0, 1, 1, 0, 0, 2, 2};
    const std::vector<float> gate = {0, 0, 30, 30, 30, 30, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const RopeTable rope = rope_table_default(RopeStyle::Normal, 0, 10000.0f);  // no rope: the pooling alone
    std::vector<float> state(static_cast<size_t>(s.state_floats()), 0.0f), once(4, -1.0f);
    kv_compressor_step(s, w, kv.data(), gate.data(), 4, 0, 0.0f, rope, state.data(),
                       [&](int64_t e) { return once.data() + e * 2; });
    EXPECT_NEAR(once[0], 1.0f / std::sqrt(0.5f), 1e-4f);  // token 0's Cb (1, 0), normalized
    EXPECT_NEAR(once[1], 0.0f, 1e-4f);
    EXPECT_NEAR(once[2], 5.0f / std::sqrt(37.0f), 1e-4f);  // token 1's Ca (5, 7), normalized
    EXPECT_NEAR(once[3], 7.0f / std::sqrt(37.0f), 1e-4f);
    std::vector<float> state2(state.size(), 0.0f), stepwise(4, -1.0f);
    for (int64_t t = 0; t < 4; ++t) {
        kv_compressor_step(s, w, kv.data() + t * 4, gate.data() + t * 4, 1, t, 0.0f, rope, state2.data(),
                           [&](int64_t e) { return stepwise.data() + e * 2; });
    }
    EXPECT_EQ(stepwise, once);
    EXPECT_EQ(state2, state);
}

TEST(Deepseek4Indexer, KeepsTheBestScoresOfTheVisibleEntries) {
    // Two heads of 2; head weights 1 and 0.5; scale 1.
    const std::vector<float> q = {1, 0, 0, 1}, weights = {1.0f, 0.5f};
    // Entry scores: relu(k0) + 0.5 relu(k1).
    const std::vector<float> keys = {1, 1, -5, 4, 3, -1, 0.5f, 1, 2, 2};
    // 1.5, 2 (relu drops the −5), 3, 1, 3
    std::vector<int64_t> picks(5, -1);
    IndexScoreScratch scratch;
    ASSERT_EQ(lightning_indexer_top_k(q.data(), weights.data(), 2, 2, keys.data(), 5, 2, 1.0f, picks.data(), scratch), 2);
    EXPECT_EQ(picks[0], 2);  // the tie at 3 keeps the lower index ...
    EXPECT_EQ(picks[1], 4);  // ... and both are kept, ascending
    ASSERT_EQ(lightning_indexer_top_k(q.data(), weights.data(), 2, 2, keys.data(), 5, 3, 1.0f, picks.data(), scratch), 3);
    EXPECT_EQ(std::vector<int64_t>(picks.begin(), picks.begin() + 3), (std::vector<int64_t>{1, 2, 4}));
    // Only the visible entries compete, and no more than are visible are kept.
    ASSERT_EQ(lightning_indexer_top_k(q.data(), weights.data(), 2, 2, keys.data(), 2, 4, 1.0f, picks.data(), scratch), 2);
    EXPECT_EQ(std::vector<int64_t>(picks.begin(), picks.begin() + 2), (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(lightning_indexer_top_k(q.data(), weights.data(), 2, 2, keys.data(), 0, 4, 1.0f, picks.data(), scratch), 0);
}

TEST(Deepseek4Routing, SqrtSoftplusScoresWeighTheChosenExperts) {
    const std::vector<float> logits = {0.0f, 1.0f, -1.0f, 25.0f};
    const auto score = [](float l) { return std::sqrt(l > 20.0f ? l : std::log1p(std::exp(l))); };
    // By score with a bias that only chooses: expert 2 wins its place, weighed by its own score.
    const std::vector<float> bias = {0.0f, 0.0f, 10.0f, 0.0f};
    ExpertAssignments out;
    ASSERT_TRUE(route_sqrt_softplus(logits.data(), 1,
                                    {.n_expert = 4, .n_used = 2, .selection_bias = bias.data(), .scale = 1.5f}, out));
    ASSERT_EQ(out[2].size(), 1u);
    ASSERT_EQ(out[3].size(), 1u);
    EXPECT_TRUE(out[0].empty() && out[1].empty());
    const float sum = score(-1.0f) + score(25.0f);
    EXPECT_NEAR(out[2][0].second, score(-1.0f) / sum * 1.5f, 1e-6f);
    EXPECT_NEAR(out[3][0].second, 5.0f / sum * 1.5f, 1e-6f);
    // By hash: the table's experts, whatever the scores.
    const std::vector<int32_t> ids = {0, 2};
    ASSERT_TRUE(route_sqrt_softplus(logits.data(), 1, {.n_expert = 4, .n_used = 2, .hash_ids = ids.data()}, out));
    ASSERT_EQ(out[0].size(), 1u);
    ASSERT_EQ(out[2].size(), 1u);
    EXPECT_NEAR(out[0][0].second, score(0.0f) / (score(0.0f) + score(-1.0f)), 1e-6f);
    const std::vector<int32_t> bad = {0, 4};
    EXPECT_FALSE(route_sqrt_softplus(logits.data(), 1, {.n_expert = 4, .n_used = 2, .hash_ids = bad.data()}, out));
}

TEST(Deepseek4Routing, TheClampIsAsymmetric) {
    std::vector<float> gate = {20.0f, -20.0f, 1.0f}, up = {15.0f, -15.0f, -2.0f};
    apply_expert_activation(ExpertActivation::ClampedSwiGlu, gate.data(), up.data(), 3, 10.0f);
    EXPECT_NEAR(gate[0], 10.0f * sigmoid(10.0f) * 10.0f, 1e-4f);     // both clamped at 10
    EXPECT_NEAR(gate[1], -20.0f * sigmoid(-20.0f) * -10.0f, 1e-9f);  // the gate has no floor
    EXPECT_NEAR(gate[2], 1.0f * sigmoid(1.0f) * -2.0f, 1e-6f);
}

}  // namespace
}  // namespace strata
