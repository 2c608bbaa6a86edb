// The CPU-only proof of tiered execution (issue 9): a fixture MoE model run with a fast tier of
// only 2-3 slots — so most experts miss and the slots churn — gives logits identical bit for bit
// to the all-resident run, as one batch and token by token, whatever the policy, copy budget and
// split of homes between the RAM arena and the mapped file. Hits are computed from the slots'
// copies, misses from the arena or the file; the counters add up to the routed pairs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "experts/expert_executor.h"
#include "model/model.h"
#include "support/testdata.h"

namespace strata {
namespace {

struct TierSetup {
    size_t slots;
    PolicyKind policy;
    uint64_t copy_budget_slots;  // 0: unlimited
    bool hits_expected;          // false: the pool is too small for the policy to ever hit
    const char* label;
};

class TieredParity : public ::testing::TestWithParam<std::string> {};

TEST_P(TieredParity, LogitsIdenticalToAllResident) {
    const std::string path = test::testdata_path("models/" + GetParam() + ".gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    const ModelConfig& cfg = (*model)->config();
    ASSERT_TRUE(cfg.is_moe());
    const int64_t vocab = cfg.n_vocab;
    const std::vector<int32_t> tokens = {1, 450, 7, 3001, 29, 12, 998, 5, 64, 77, 2048, 3};
    const int64_t n = static_cast<int64_t>(tokens.size());
    std::vector<int32_t> pos(static_cast<size_t>(n));
    std::iota(pos.begin(), pos.end(), 0);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);

    // Runs the prompt as one batch, then again token by token; returns both logit tables.
    auto run = [&](MoeExpertSource* source) {
        std::vector<float> out(static_cast<size_t>(2 * n * vocab));
        KvCache kv = (*model)->make_kv_cache(n);
        (*model)->forward(Batch{tokens.data(), pos.data(), n, 0, source}, kv, out.data(), LogitsFor::All, ctx);
        KvCache kv1 = (*model)->make_kv_cache(n);
        for (int64_t t = 0; t < n; ++t)
            (*model)->forward(Batch{tokens.data() + t, pos.data() + t, 1, t, source}, kv1,
                              out.data() + (n + t) * vocab, LogitsFor::All, ctx);
        return out;
    };
    const std::vector<float> want = run(nullptr);

    auto layers = expert_tensors_from_gguf(*file);
    ASSERT_TRUE(layers) << layers.status().message();
    const uint64_t n_moe_layers = layers->size();
    const size_t n_keys = n_moe_layers * cfg.n_expert;
    // Two forward runs (batch + token by token) route each token through every MoE layer once.
    const uint64_t routed_pairs = 2 * static_cast<uint64_t>(n) * cfg.n_expert_used * n_moe_layers;
    const uint64_t moe_steps = (1 + static_cast<uint64_t>(n)) * n_moe_layers;

    // LRU with 2 slots shared by all layers admits each layer's experts and evicts them before
    // the next token reaches that layer again: a cyclic pattern larger than the cache, so it never
    // hits — the most churn, every expert from RAM or disk, and the logits must still match.
    const TierSetup setups[] = {{2, PolicyKind::Lru, 0, false, "lru, 2 slots"},
                                {3, PolicyKind::Lru, 1, true, "lru, 3 slots, 1 copy/step"},
                                {3, PolicyKind::LfuDecay, 0, true, "lfu-decay, 3 slots"},
                                {2, PolicyKind::LfuDecay, 1, true, "lfu-decay, 2 slots, 1 copy/step"}};
    for (const TierSetup& s : setups) {
        SCOPED_TRACE(s.label);
        // Half the experts homed in the arena, half read from the file: all three tiers serve.
        ExpertStore store(*layers, {.slots = s.slots, .ram_experts = n_keys / 2});
        auto policy = make_expert_policy(s.policy, store.key_count(), 0.9);
        ExpertExecutor tiers(store, *policy, {.copy_budget_bytes = s.copy_budget_slots * store.slot_bytes()});
        const std::vector<float> got = run(&tiers);

        size_t differing = 0;
        for (size_t i = 0; i < want.size(); ++i) differing += std::memcmp(&want[i], &got[i], sizeof(float)) != 0;
        EXPECT_EQ(differing, 0u) << "logits differ from the all-resident run (of " << want.size() << ")";

        const ExpertStats& st = store.stats();
        EXPECT_EQ(st.routed_pairs(), routed_pairs);
        EXPECT_EQ(st.steps, moe_steps);
        uint64_t layer_hits = 0, layer_misses = 0;
        for (const LayerCounters& L : st.layers) {
            layer_hits += L.hits;
            layer_misses += L.misses;
        }
        EXPECT_EQ(layer_hits, st.hits());
        EXPECT_EQ(layer_misses, st.misses());
        // The cache did work: hits computed from slot copies, and the slots churned.
        if (s.hits_expected) {
            EXPECT_GT(st.hits(), 0u);
        }
        EXPECT_GT(st.tier(Tier::Ram).expert_uses, 0u);
        EXPECT_GT(st.tier(Tier::Disk).expert_uses, 0u);
        EXPECT_GT(st.evictions, 0u);
        EXPECT_EQ(st.admissions - st.evictions, store.residents().size());
        EXPECT_LE(store.residents().size(), s.slots);
        EXPECT_EQ(st.bytes_copied_to_slots(), st.admissions * store.bytes(0).total());
        std::printf("[ tiers ] %s %s: hit rate %.3f (%llu of %llu uses, pairs %.3f), %llu admissions, %llu evictions\n",
                    GetParam().c_str(), s.label, st.hit_rate(), static_cast<unsigned long long>(st.hits()),
                    static_cast<unsigned long long>(st.uses()), st.pair_hit_rate(),
                    static_cast<unsigned long long>(st.admissions), static_cast<unsigned long long>(st.evictions));
    }
}

INSTANTIATE_TEST_SUITE_P(MoeFixtures, TieredParity, ::testing::Values("qwen3moe", "mixtral"));

}  // namespace
}  // namespace strata
