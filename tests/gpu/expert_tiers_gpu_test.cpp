// The expert tiers beside a GPU (experts/gpu_expert_tiers.h) on the fixture MoE models: whatever
// the cache size and whichever lane computes the misses, the logits must match HF transformers'
// as the all-in-VRAM GPU model does; experts streamed into staging slots go through the same
// kernels as resident ones, so a run that streams every miss must give the all-resident logits
// bit for bit. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "model/gpu/gpu_model.h"
#include "fixture_model.h"
#include "model/model.h"
#include "model/parity.h"
#include "runtime/gpu_placement.h"
#include "support/testdata.h"

namespace strata {
namespace {

struct TierCase {
    std::string model;
    int64_t slots;
    std::string lane;
};

std::string case_name(const ::testing::TestParamInfo<TierCase>& info) {
    return test::model_fixture_label(info.param.model) + "_slots" + std::to_string(info.param.slots) + "_" +
           info.param.lane;
}

class GpuExpertTiers : public ::testing::TestWithParam<TierCase> {};

// Loads the model on the GPU with its experts tiered as the case says (prefetch: experts copied
// ahead per decode step, into a ring of `staging` slots when >= 2).
Result<std::unique_ptr<Model>> load_tiered(const GgufFile& f, const TierCase& c, GpuPlacement* placement,
                                           uint32_t prefetch = kDefaultExpertPrefetch, int64_t staging = -1,
                                           const TierTuning& tuning = {}) {
    ComputeOptions options{.device = ComputeDevice::Gpu};
    GpuPlacementRequest req;
    req.expert_slots = c.slots;
    req.force_tiers = true;
    req.miss_lane = miss_lane_from_name(c.lane).value();
    req.n_ctx = 256;
    req.expert_prefetch = prefetch;
    req.staging_slots = staging;
    req.tier_tuning = tuning;
    STRATA_ASSIGN_OR_RETURN(*placement, place_on_gpu(f, options, req));
    return load_model_on(f, options);
}

// How many values of two logit vectors differ (all of them when the sizes do).
size_t values_differing(const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size()) return std::max(got.size(), want.size());
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
    return differ;
}

TEST_P(GpuExpertTiers, MatchesTransformersLogits) {
    const std::string why = gpu_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "no GPU: " << why;
    const TierCase c = GetParam();
    const std::string model_path = test::model_fixture_stem(c.model) + ".gguf";
    const std::string ref_path = test::model_fixture_stem(c.model) + ".ref.gguf";
    STRATA_SKIP_IF_MISSING(model_path);
    STRATA_SKIP_IF_MISSING(ref_path);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    for (int64_t chunk : {0, 1, 5}) {
        GpuPlacement placement;
        auto report = run_parity(model_path, ref_path, chunk, pool,
                                 [&](const GgufFile& f) { return load_tiered(f, c, &placement); });
        ASSERT_TRUE(report) << report.status().message();
        ASSERT_TRUE(placement.tiered);
        const GpuExpertTierStats& st = *placement.stats;
        std::printf("gpu-tiers %-9s slots %-3lld lane %-6s chunk %lld: nmse %.3e  top-1 %lld/%lld  uses %llu = %llu hits + "
                    "%llu cpu + %llu streamed\n",
                    c.model.c_str(), static_cast<long long>(c.slots), c.lane.c_str(), static_cast<long long>(chunk),
                    report->nmse, static_cast<long long>(report->top1_agree), static_cast<long long>(report->n_tokens),
                    static_cast<unsigned long long>(st.expert_uses), static_cast<unsigned long long>(st.hits),
                    static_cast<unsigned long long>(st.cpu_experts), static_cast<unsigned long long>(st.streamed_experts));
        // As the model parity test: a routing near-tie may flip one position under f16 activations.
        const double min_top1 = static_cast<double>(report->n_tokens - 1) / static_cast<double>(report->n_tokens);
        const ParityVerdict verdict = judge_parity(*report, 1e-5, min_top1, 2);
        EXPECT_TRUE(verdict.pass) << "nmse " << report->nmse << ", " << verdict.outliers.size() << " positions over the limit";
        EXPECT_EQ(st.expert_uses, st.hits + st.cpu_experts + st.streamed_experts);
        EXPECT_EQ(st.routed_pairs, st.hit_pairs + st.cpu_pairs + st.streamed_pairs);
        EXPECT_GT(st.expert_uses, 0u);
        if (c.lane == "cpu") {
            EXPECT_EQ(st.streamed_experts, 0u);
        }
        if (c.lane == "stream") {
            EXPECT_EQ(st.cpu_experts, 0u);
        }
        if (c.slots == 0) {
            EXPECT_EQ(st.hits, 0u);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Lanes, GpuExpertTiers,
                         ::testing::Values(TierCase{"qwen3moe", 0, "stream"}, TierCase{"qwen3moe", 0, "cpu"},
                                           TierCase{"qwen3moe", 3, "auto"}, TierCase{"qwen3moe", 3, "stream"},
                                           TierCase{"mixtral", 2, "auto"}, TierCase{"mixtral", 0, "cpu"},
                                           TierCase{"qwen3next", 2, "auto"}, TierCase{"qwen35moe", 0, "cpu"},
                                           TierCase{"deepseek3", 2, "auto"}, TierCase{"gptoss", 0, "stream"},
                                           TierCase{"gptoss", 0, "cpu"}, TierCase{"gptoss", 3, "auto"},
                                           TierCase{"project:qwen4exp", 1, "auto"},
                                           TierCase{"project:qwen4exp", 2, "cpu"},
                                           TierCase{"project:qwen4exp", 0, "stream"}),
                         case_name);

// Streaming every miss runs the same kernels on the same bytes as the all-resident model (gpt-oss:
// with its expert biases and clamped activation).
class GpuExpertTiersExact : public test::GpuFixtureModel {};

TEST_P(GpuExpertTiersExact, StreamedEqualsResidentBitForBit) {
    auto logits_of = [&](Model& m) {
        const int64_t n = 12, vocab = m.config().n_vocab;
        std::vector<int32_t> tokens(n), positions(n);
        for (int64_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 7 + 3) % vocab), positions[i] = static_cast<int32_t>(i);
        KvCache kv = m.make_kv_cache(n);
        std::vector<float> out(static_cast<size_t>(n * vocab));
        m.forward(Batch{tokens.data(), positions.data(), n, 0}, kv, out.data(), LogitsFor::All, cpu);
        return out;
    };
    auto resident = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(resident) << resident.status().message();
    const std::vector<float> want = logits_of(**resident);
    // Steps that use a quarter of a layer's experts made scan steps, which copy the next layer's
    // experts ahead of its routing (experts/scan_steps.h) through the staging ring, here also a
    // ring of two and of four slots (halves of one and two experts) that every layer wraps around
    // many times. (Twelve tokens use half to three quarters of a fixture layer's experts.)
    for (int64_t staging : {-1, 2, 4}) {
        for (int64_t slots : {0, 5}) {
            GpuPlacement placement;
            auto tiered = load_tiered(*file, TierCase{GetParam(), slots, "stream"}, &placement, kDefaultExpertPrefetch, staging,
                                      TierTuning{.scan_coverage = 0.25});
            ASSERT_TRUE(tiered) << tiered.status().message();
            const std::vector<float> got = logits_of(**tiered);
            EXPECT_EQ(values_differing(got, want), 0u) << "slots " << slots << ", staging " << staging;
            const GpuExpertTierStats& st = *placement.stats;
            EXPECT_GT(st.streamed_experts, 0u);
            EXPECT_GT(st.prefetch_hits, 0u) << "slots " << slots << ", staging " << staging;
            EXPECT_EQ(st.admissions, 0u);  // scan steps leave the cache as it was filled
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Models, GpuExpertTiersExact, ::testing::Values("qwen3moe", "gptoss"));

// Decode with experts copied ahead (the next layer's router on this layer's input) computes the
// same bits as decode that streams every miss when its layer routes: only where the copy came
// from changes. The ring is made large enough to leave room above a step's k streamed experts.
// Twelve one-token decode steps of tokens (i · stride + offset) mod vocabulary; every step's logits.
std::vector<float> decode_steps(Model& m, int32_t stride, int32_t offset, CpuContext& cpu) {
    const int64_t n = 12, vocab = m.config().n_vocab;
    KvCache kv = m.make_kv_cache(n);
    RecurrentState state = m.make_recurrent_state();
    std::vector<float> out(static_cast<size_t>(n * vocab));
    for (int32_t i = 0; i < n; ++i) {
        const int32_t token = static_cast<int32_t>((i * stride + offset) % vocab);
        m.forward_with_state(Batch{&token, &i, 1, i}, kv, state, out.data() + i * vocab, LogitsFor::Last, cpu);
    }
    return out;
}

class GpuExpertTiersPrefetch : public test::GpuFixtureModel {};

TEST_P(GpuExpertTiersPrefetch, CopiesAheadChangeNoBits) {
    auto decode = [&](Model& m) { return decode_steps(m, 7, 3, cpu); };
    const TierCase c{GetParam(), 0, "stream"};
    GpuPlacement plain_placement, ahead_placement;
    std::vector<float> want;
    {
        auto plain = load_tiered(*file, c, &plain_placement, 0, 16);
        ASSERT_TRUE(plain) << plain.status().message();
        want = decode(**plain);
    }
    auto ahead = load_tiered(*file, c, &ahead_placement, 4, 16);
    ASSERT_TRUE(ahead) << ahead.status().message();
    const std::vector<float> got = decode(**ahead);
    EXPECT_EQ(values_differing(got, want), 0u);
    const GpuExpertTierStats& st = *ahead_placement.stats;
    std::printf("gpu-tiers prefetch %-9s: %llu uses, %llu copied ahead, %llu of them for a layer that came, %llu used\n",
                GetParam().c_str(), static_cast<unsigned long long>(st.expert_uses),
                static_cast<unsigned long long>(st.prefetched), static_cast<unsigned long long>(st.prefetch_offered),
                static_cast<unsigned long long>(st.prefetch_hits));
    EXPECT_GT(st.prefetched, 0u);
    EXPECT_GT(st.prefetch_hits, 0u);
    EXPECT_LE(st.prefetch_hits, st.prefetch_offered);
    EXPECT_EQ(st.expert_uses, st.hits + st.cpu_experts + st.streamed_experts);
    EXPECT_EQ(plain_placement.stats->prefetched, 0u);
}

// gpt-oss's router has a bias; deepseek3's routing is grouped (route_experts): both predicted too.
INSTANTIATE_TEST_SUITE_P(Models, GpuExpertTiersPrefetch,
                         ::testing::Values("qwen3moe", "mixtral", "qwen3next", "gptoss", "deepseek3", "project:qwen4exp"));

// The early combine (a CPU lane beside a GPU part, awaited by the GPU through a counter in
// page-locked memory while the host queues on) computes the bits of the lane awaited by the host
// (TierTuning::early_combine off): only who waits changes. Hits on the GPU and every miss on the
// CPU, so that every decode step has both parts.
class GpuExpertTiersEarlyCombine : public test::GpuFixtureModel {};

TEST_P(GpuExpertTiersEarlyCombine, GpuAwaitedLaneChangesNoBits) {
    auto decode = [&](Model& m) { return decode_steps(m, 5, 1, cpu); };
    const TierCase c{GetParam(), 3, "cpu"};
    GpuPlacement host_placement, gpu_placement;
    std::vector<float> want;
    {
        auto host_awaited = load_tiered(*file, c, &host_placement, 0, -1, TierTuning{.early_combine = false});
        ASSERT_TRUE(host_awaited) << host_awaited.status().message();
        want = decode(**host_awaited);
    }
    auto gpu_awaited = load_tiered(*file, c, &gpu_placement, 0);
    ASSERT_TRUE(gpu_awaited) << gpu_awaited.status().message();
    const std::vector<float> got = decode(**gpu_awaited);
    EXPECT_EQ(values_differing(got, want), 0u);
    const GpuExpertTierStats& st = *gpu_placement.stats;
    std::printf("gpu-tiers early combine %-9s: %llu layer steps, %llu lanes awaited by the GPU, %llu hits, %llu cpu\n",
                GetParam().c_str(), static_cast<unsigned long long>(st.layer_steps),
                static_cast<unsigned long long>(st.lanes_awaited_by_gpu), static_cast<unsigned long long>(st.hits),
                static_cast<unsigned long long>(st.cpu_experts));
    EXPECT_GT(st.lanes_awaited_by_gpu, 0u);
    EXPECT_EQ(host_placement.stats->lanes_awaited_by_gpu, 0u);
    EXPECT_GT(host_placement.stats->cpu_experts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, GpuExpertTiersEarlyCombine, ::testing::Values("qwen3moe", "qwen3next", "gptoss"));

}  // namespace
}  // namespace strata
