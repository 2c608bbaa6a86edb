// The sampler on a vocabulary of Qwen3's size (151,936 logits): the host work of every generated
// token when the logits come back from the GPU. Logits are drawn as a model's look: most around 0
// (normal, sd 3), a few dozen well above them. Reports ns per sampled token.
//
//   build/bin/sampler_bench                        # every setting
//   build/bin/sampler_bench --benchmark_filter=top_p
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "runtime/sampler.h"

namespace {

using namespace strata;

constexpr int64_t kVocab = 151936;

std::vector<float> model_like_logits(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> body(0.0f, 3.0f);
    std::vector<float> logits(kVocab);
    for (float& l : logits) l = body(rng);
    std::uniform_int_distribution<int64_t> pick(0, kVocab - 1);
    std::uniform_real_distribution<float> lift(8.0f, 16.0f);
    for (int i = 0; i < 40; ++i) logits[static_cast<size_t>(pick(rng))] += lift(rng);
    return logits;
}

void sample_with(benchmark::State& state, SamplingParams params) {
    std::vector<std::vector<float>> steps;
    for (uint32_t s = 0; s < 8; ++s) steps.push_back(model_like_logits(s));
    Sampler sampler(params);
    for (int i = 0; i < 64; ++i) sampler.accept(i * 97 % kVocab);  // a history for the penalties
    size_t step = 0;
    for (auto _ : state) {
        const int32_t token = sampler.sample(steps[step++ % steps.size()].data(), kVocab);
        benchmark::DoNotOptimize(token);
    }
}

void BM_greedy(benchmark::State& s) { sample_with(s, SamplingParams{.temperature = 0.0f}); }
void BM_default(benchmark::State& s) { sample_with(s, SamplingParams{}); }  // T 0.8, top-k 40, top-p .95, min-p .05
void BM_top_p_without_top_k(benchmark::State& s) {
    sample_with(s, SamplingParams{.temperature = 0.7f, .top_k = 0, .top_p = 0.9f, .min_p = 0.0f});
}
void BM_min_p_without_top_k(benchmark::State& s) {
    sample_with(s, SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.05f});
}
void BM_penalties(benchmark::State& s) {
    sample_with(s, SamplingParams{.repetition_penalty = 1.1f, .presence_penalty = 0.5f, .frequency_penalty = 0.5f});
}
void BM_full_distribution(benchmark::State& s) {
    sample_with(s, SamplingParams{.temperature = 1.0f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f});
}

BENCHMARK(BM_greedy);
BENCHMARK(BM_default);
BENCHMARK(BM_top_p_without_top_k);
BENCHMARK(BM_min_p_without_top_k);
BENCHMARK(BM_penalties);
BENCHMARK(BM_full_distribution);

}  // namespace

BENCHMARK_MAIN();
