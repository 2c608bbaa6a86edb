// Several sequences on one GPU model.
// - The hybrid models' recurrent state in VRAM (model/gpu/gpu_hybrid.cpp): two sequences whose
//   steps interleave, each with its own RecurrentState and KV cache, must give the logits each
//   gives alone — decode steps included, where the one-token graph is captured with one state's
//   buffers and must not be replayed on the other's — and a state used once and restarted at
//   position 0 must start from zeros again.
// - Fused steps (forward_multi, the server's continuous batching): prompts of different lengths
//   in one pass, then decode steps of all sequences in one pass, against each sequence alone. A
//   larger batch may take other kernels (the one-token matrix-vector kernel, the expert plan), so
//   the logits agree to float rounding rather than bit for bit.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "core/nmse.h"

#include "model/gpu/gpu_model.h"
#include "fixture_model.h"
#include "model/model.h"
#include "support/testdata.h"

namespace strata {
namespace {

struct Sequence {
    KvCache kv;
    RecurrentState state;
    std::vector<int32_t> tokens;
};

// A prompt batch of `prompt` tokens, then one-token steps; returns the last-row logits of each.
class Stepper {
public:
    Stepper(Model& m, CpuContext& cpu) : m_(m), cpu_(cpu) {}
    std::vector<float> step(Sequence& s, int64_t pos, int64_t n) {
        std::vector<int32_t> positions(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) positions[static_cast<size_t>(i)] = static_cast<int32_t>(pos + i);
        std::vector<float> logits(static_cast<size_t>(m_.config().n_vocab));
        m_.forward_with_state(Batch{s.tokens.data() + pos, positions.data(), n, pos}, s.kv, s.state, logits.data(),
                              LogitsFor::Last, cpu_);
        return logits;
    }

private:
    Model& m_;
    CpuContext& cpu_;
};

class GpuHybridState : public test::GpuFixtureModel {};

TEST_P(GpuHybridState, InterleavedSequencesEqualEachAlone) {
    auto model = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(model) << model.status().message();
    Model& m = **model;
    Stepper stepper(m, cpu);
    const int64_t prompt = 9, steps = 5, total = prompt + steps, vocab = m.config().n_vocab;
    const auto make = [&](int32_t seed) {
        Sequence s{m.make_kv_cache(total), m.make_recurrent_state(), {}};
        for (int64_t i = 0; i < total; ++i) s.tokens.push_back(static_cast<int32_t>((i * 13 + seed) % vocab));
        return s;
    };
    ASSERT_FALSE(m.make_recurrent_state().empty());

    // Alone: a, then b, each prompt + steps.
    std::vector<std::vector<float>> alone_a, alone_b;
    {
        Sequence a = make(3), b = make(5);
        alone_a.push_back(stepper.step(a, 0, prompt));
        for (int64_t i = prompt; i < total; ++i) alone_a.push_back(stepper.step(a, i, 1));
        alone_b.push_back(stepper.step(b, 0, prompt));
        for (int64_t i = prompt; i < total; ++i) alone_b.push_back(stepper.step(b, i, 1));
    }
    // Interleaved: a's and b's steps alternate, so consecutive one-token steps switch states.
    Sequence a = make(3), b = make(5);
    EXPECT_EQ(stepper.step(a, 0, prompt), alone_a[0]);
    EXPECT_EQ(stepper.step(b, 0, prompt), alone_b[0]);
    for (int64_t i = prompt; i < total; ++i) {
        EXPECT_EQ(stepper.step(a, i, 1), alone_a[static_cast<size_t>(i - prompt + 1)]) << "a at " << i;
        EXPECT_EQ(stepper.step(b, i, 1), alone_b[static_cast<size_t>(i - prompt + 1)]) << "b at " << i;
    }
    // a restarted at position 0 (its state must be zeroed, its cache overwritten) equals a fresh a.
    EXPECT_EQ(stepper.step(a, 0, prompt), alone_a[0]);
    EXPECT_EQ(stepper.step(a, prompt, 1), alone_a[1]);
}

// A turn checkpoint on the GPU: the state (each layer's conv and ssm buffers, the PLE history)
// copied to the host after the prompt, the sequence taken on a detour of other tokens, then the
// copy loaded back into the same device buffers (a captured decode graph keeps its addresses): the
// next steps give the logits of the run that never left, bit for bit (same kernels, same chunks).
TEST_P(GpuHybridState, RestoredSnapshotContinuesAsIfUninterrupted) {
    auto model = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(model) << model.status().message();
    Model& m = **model;
    Stepper stepper(m, cpu);
    const int64_t prompt = 9, steps = 4, total = prompt + steps, vocab = m.config().n_vocab;
    Sequence s{m.make_kv_cache(total), m.make_recurrent_state(), {}};
    for (int64_t i = 0; i < total; ++i) s.tokens.push_back(static_cast<int32_t>((i * 13 + 3) % vocab));
    stepper.step(s, 0, prompt);
    std::vector<std::vector<float>> want;
    for (int64_t i = prompt; i < total; ++i) want.push_back(stepper.step(s, i, 1));

    stepper.step(s, 0, prompt);
    const RecurrentSnapshot checkpoint = s.state.snapshot();
    ASSERT_EQ(checkpoint.bytes.size(), s.state.bytes());
    const std::vector<int32_t> kept = s.tokens;
    for (int64_t i = prompt; i < total; ++i) s.tokens[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7 + 1) % vocab);
    for (int64_t i = prompt; i < total; ++i) stepper.step(s, i, 1);  // the detour
    s.tokens = kept;
    ASSERT_TRUE(s.state.restore(checkpoint).is_ok());
    for (int64_t i = prompt; i < total; ++i) {
        EXPECT_EQ(stepper.step(s, i, 1), want[static_cast<size_t>(i - prompt)]) << "at " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(Hybrids, GpuHybridState, ::testing::Values("qwen3next", "qwen35moe", "project:qwen4exp"));

class GpuFusedSequences : public test::GpuFixtureModel {};

TEST_P(GpuFusedSequences, FusedStepsMatchEachAlone) {
    auto model = load_model_on(*file, ComputeOptions{.device = ComputeDevice::Gpu});
    ASSERT_TRUE(model) << model.status().message();
    Model& m = **model;
    ASSERT_TRUE(m.fuses_sequences());
    Stepper stepper(m, cpu);
    const std::vector<int64_t> prompts = {5, 9, 3};
    const int64_t steps = 4, vocab = m.config().n_vocab;
    const auto make = [&](size_t i) {
        Sequence s{m.make_kv_cache(prompts[i] + steps), m.make_recurrent_state(), {}};
        for (int64_t t = 0; t < prompts[i] + steps; ++t) s.tokens.push_back(static_cast<int32_t>((t * 11 + 7 * i + 1) % vocab));
        return s;
    };
    // Alone: each sequence's prompt, then its steps.
    std::vector<std::vector<float>> alone;  // per sequence: prompt logits, then each step's
    for (size_t i = 0; i < prompts.size(); ++i) {
        Sequence s = make(i);
        alone.push_back(stepper.step(s, 0, prompts[i]));
        for (int64_t t = prompts[i]; t < prompts[i] + steps; ++t) {
            const std::vector<float> l = stepper.step(s, t, 1);
            alone[i].insert(alone[i].end(), l.begin(), l.end());
        }
    }
    // Fused: all prompts in one pass, then one pass per decode step with every sequence in it.
    std::vector<Sequence> seqs;
    for (size_t i = 0; i < prompts.size(); ++i) seqs.push_back(make(i));
    std::vector<std::vector<float>> fused(prompts.size());
    for (int64_t round = 0; round <= steps; ++round) {
        std::vector<SequenceStep> batch;
        std::vector<std::vector<float>> logits(prompts.size(), std::vector<float>(static_cast<size_t>(vocab)));
        for (size_t i = 0; i < prompts.size(); ++i) {
            const int64_t pos = round == 0 ? 0 : prompts[i] + round - 1, n = round == 0 ? prompts[i] : 1;
            batch.push_back(SequenceStep{seqs[i].tokens.data() + pos, n, pos, &seqs[i].kv, &seqs[i].state,
                                         logits[i].data(), LogitsFor::Last});
        }
        m.forward_multi(batch, cpu);
        for (size_t i = 0; i < prompts.size(); ++i) fused[i].insert(fused[i].end(), logits[i].begin(), logits[i].end());
    }
    for (size_t i = 0; i < prompts.size(); ++i) {
        ASSERT_EQ(fused[i].size(), alone[i].size());
        const double nmse = normalized_mse(fused[i], alone[i]);
        std::printf("gpu-fused %-9s sequence %zu: nmse vs alone %.3e\n", GetParam().c_str(), i, nmse);
        EXPECT_LT(nmse, 1e-8) << "sequence " << i;
        for (int64_t r = 0; r <= steps; ++r) {  // the same next token everywhere
            const auto row = [&](const std::vector<float>& v) {
                const auto b = v.begin() + r * vocab;
                return std::max_element(b, b + vocab) - b;
            };
            EXPECT_EQ(row(fused[i]), row(alone[i])) << "sequence " << i << " row " << r;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, GpuFusedSequences,
                         ::testing::Values("llama", "qwen3moe", "mixtral", "gptoss", "qwen3next", "qwen35moe", "deepseek3",
                                           "project:qwen4exp"));

}  // namespace
}  // namespace strata
