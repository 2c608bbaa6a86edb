// The bandwidth probe's read loops (runtime/memory_bandwidth_kernels.h), as `strata bench` runs
// them: every thread of a pool sums its own slice of one buffer far larger than the last-level
// cache, wall time per pass. Compares the baseline loop with the AVX2 one, each without and with
// a software prefetch 2 or 4 KiB ahead, at 1, 2 and all hardware threads.
//
//   build/bin/memory_bandwidth_bench                       # 1 GiB buffer
//   build/bin/memory_bandwidth_bench --benchmark_repetitions=5

#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/thread_pool.h"
#include "quant/cpu/cpu_features.h"
#include "runtime/memory_bandwidth_kernels.h"

namespace strata {
namespace {

constexpr uint64_t kBufferBytes = uint64_t(1) << 30;

using SumFn = uint64_t (*)(const uint8_t*, uint64_t, uint64_t);

void bench_probe(benchmark::State& state, SumFn sum, uint64_t prefetch_bytes, int threads) {
    ThreadPool pool(ThreadPool::Options{.threads = threads});
    const uint64_t slice = kBufferBytes / static_cast<uint64_t>(threads) / 4096 * 4096;
    AlignedBuffer buffer(slice * static_cast<uint64_t>(threads));
    uint8_t* base = buffer.data();
    // Each thread faults in its own slice, as the probe does.
    pool.parallel_for(threads, [&](int64_t t0, int64_t t1, int) {
        for (int64_t t = t0; t < t1; ++t) std::memset(base + static_cast<uint64_t>(t) * slice, 1, slice);
    });
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    for (auto _ : state) {
        pool.parallel_for(threads, [&](int64_t t0, int64_t t1, int) {
            for (int64_t t = t0; t < t1; ++t) sums[static_cast<size_t>(t)] = sum(base + static_cast<uint64_t>(t) * slice, slice, prefetch_bytes);
        });
        benchmark::DoNotOptimize(sums.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * slice * static_cast<uint64_t>(threads)));
}

void register_benchmarks() {
    const int all = static_cast<int>(std::thread::hardware_concurrency());
    std::vector<int> counts = {1};
    if (all >= 2) counts.push_back(2);
    if (all > 2) counts.push_back(all);
    for (int threads : counts) {
        for (bool avx2 : {false, true}) {
            if (avx2 && cpu_simd_level() < SimdLevel::Avx2) continue;
            for (uint64_t window : {0, 2048, 4096}) {
                const std::string name = std::string("probe/") + (avx2 ? "avx2" : "baseline") + "/prefetch:" + std::to_string(window) +
                                         "/threads:" + std::to_string(threads);
                benchmark::RegisterBenchmark(name.c_str(), bench_probe, avx2 ? sum_words_avx2 : sum_words_baseline, window, threads)
                    ->Unit(benchmark::kMillisecond)
                    ->UseRealTime()
                    ->MinTime(1.0);
            }
        }
    }
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    strata::register_benchmarks();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
