// Multi-threaded throughput of the CPU lane's expert products per weight type, against the DRAM
// read bandwidth measured by the same threads in the same run: what the CPU computes for the
// experts that are not on the GPU (a decode step: one token through a few experts' matrices).
//
// Each weight type gets a stacked expert tensor of the Qwen3-30B-A3B gate shape ([2048 → 768] a
// expert) that is several times the last-level cache (768 MiB of weights), and each iteration
// multiplies one token through 8 experts in one grouped call (cpu_matmul_grouped, as the MoE
// layer does), moving on to the next 8 so every read comes from DRAM. bytes_per_second counts
// weight bytes read; the counter `of_bandwidth` is that over the probe's bandwidth
// (runtime/memory_bandwidth.h), measured on the same pool just before each type's run (a shared
// machine's bandwidth moves within minutes), and `bandwidth_GBps` is that probe.
//
//   build/bin/expert_matmul_bench                        # every type, all hardware threads
//   build/bin/expert_matmul_bench --threads=2 --benchmark_filter='IQ2|Q2_0'

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/matmul.h"
#include "core/thread_pool.h"
#include "model/random_weights.h"
#include "runtime/memory_bandwidth.h"

namespace strata {
namespace {

constexpr int64_t kIn = 2048, kOut = 768, kTopK = 8;
constexpr uint64_t kTensorBytes = uint64_t(768) << 20;

int g_threads = 0;  // --threads=N, else every hardware thread

ThreadPool& pool() {
    static ThreadPool p(ThreadPool::Options{.threads = g_threads});
    return p;
}

ReadBandwidthProbe& probe() {
    static ReadBandwidthProbe p(pool());
    return p;
}

// One type's expert tensor: a few distinct random experts, tiled (the kernels' speed does not
// depend on the values), so building 768 MiB stays quick.
struct Experts {
    std::vector<uint8_t> bytes;
    Weight view;
    int64_t count = 0;
};

Experts make_experts(TensorType type) {
    std::mt19937 rng(5);
    constexpr int kDistinct = 4;
    RandomWeight seed = make_random_weight(type, kIn, kOut, kDistinct, rng);
    const uint64_t expert_bytes = seed.view.row_bytes * static_cast<uint64_t>(kOut);
    Experts e;
    e.count = static_cast<int64_t>(kTensorBytes / expert_bytes) / kTopK * kTopK;
    e.bytes.resize(expert_bytes * static_cast<uint64_t>(e.count));
    for (int64_t i = 0; i < e.count; ++i) {
        std::memcpy(e.bytes.data() + static_cast<uint64_t>(i) * expert_bytes, seed.view.matrix(i % kDistinct), expert_bytes);
    }
    e.view = seed.view;
    e.view.data = e.bytes.data();
    e.view.ne[2] = e.count;
    return e;
}

void bench_type(benchmark::State& state, TensorType type) {
    const Experts experts = make_experts(type);
    const double bandwidth = probe().measure(3).bytes_per_second;
    CpuContext ctx(pool());
    std::mt19937 rng(6);
    const std::vector<float> x = random_normal_floats(rng, kIn);
    std::vector<float> y(static_cast<size_t>(kTopK * kOut));
    int64_t next = 0;
    for (auto _ : state) {
        MatmulJob jobs[kTopK];
        for (int64_t j = 0; j < kTopK; ++j) {
            jobs[j] = MatmulJob{&experts.view, (next + j) % experts.count, x.data(), 1, y.data() + j * kOut};
        }
        cpu_matmul_grouped(jobs, ctx);
        benchmark::DoNotOptimize(y.data());
        next = (next + kTopK) % experts.count;
    }
    const double bytes = double(state.iterations()) * kTopK * double(experts.view.row_bytes) * kOut;
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["of_bandwidth"] = benchmark::Counter(bytes / bandwidth, benchmark::Counter::kIsRate);
    state.counters["bandwidth_GBps"] = bandwidth / 1e9;
    state.counters["threads"] = pool().size();
}

void register_all() {
    const TensorType types[] = {TensorType::Q8_0,   TensorType::Q4_K,    TensorType::Q2_K,   TensorType::MXFP4,
                                TensorType::NVFP4,  TensorType::Q2_0,    TensorType::Q1_0,   TensorType::IQ4_XS,
                                TensorType::IQ3_S,  TensorType::IQ3_XXS, TensorType::IQ2_S,  TensorType::IQ2_XS,
                                TensorType::IQ2_XXS, TensorType::IQ1_M,  TensorType::IQ1_S};
    for (TensorType t : types) {
        benchmark::RegisterBenchmark(("experts/" + std::string(tensor_type_name(t))).c_str(),
                                     [t](benchmark::State& s) { bench_type(s, t); })
            ->UseRealTime()
            ->Unit(benchmark::kMicrosecond);
    }
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    // --threads=N is ours; the rest is Google Benchmark's.
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (std::strncmp(argv[i], "--threads=", 10) == 0) strata::g_threads = std::atoi(argv[i] + 10);
        else rest.push_back(argv[i]);
    }
    int rest_argc = static_cast<int>(rest.size());
    benchmark::Initialize(&rest_argc, rest.data());
    strata::register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
