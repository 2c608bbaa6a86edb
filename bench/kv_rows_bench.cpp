// The CPU attention's KV row kernels, one thread: dot products of one query head with every row
// of a head's cache and the weighted sum of the rows (backend/cpu/q8_rows.h, f16_rows.h), for a
// q8_0 and an f16 cache, scalar and AVX2 (every level this CPU runs). Each variant of a type gives
// the same bits, so only the speed differs. Reported as cache rows per second.
//
//   build/bin/kv_rows_bench --benchmark_filter=q8_0
//
// Names: kv_rows/<type>/<level>/<op>/<head_dim>/<rows> (dots_8_heads: items are (row, head) pairs): 4096 rows of 128 values (a 4k-deep cache,
// one KV head of a Llama-like model; 544 KiB in q8_0, in L2/L3) and 64 rows (a short prompt).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/f16_rows.h"
#include "backend/cpu/q8_rows.h"
#include "core/fp16.h"
#include "quant/cpu/cpu_features.h"
#include "quant/legacy.h"

namespace {

using namespace strata;

struct Data {
    std::vector<float> q, weights, out;
    std::vector<uint8_t> q8;
    std::vector<uint16_t> f16;
    int64_t q8_row_bytes = 0;
};

Data make_data(int64_t n, int64_t rows) {
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    Data d;
    d.q.resize(static_cast<size_t>(n));
    for (float& v : d.q) v = dist(rng);
    d.weights.resize(static_cast<size_t>(rows));
    for (float& v : d.weights) v = std::abs(dist(rng));
    d.out.resize(static_cast<size_t>(std::max(n, rows)));
    d.q8_row_bytes = n / 32 * 34;
    d.q8.resize(static_cast<size_t>(d.q8_row_bytes * rows));
    d.f16.resize(static_cast<size_t>(n * rows));
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < rows; ++i) {
        for (float& v : row) v = dist(rng);
        quantize_row_q8_0(row.data(), d.q8.data() + i * d.q8_row_bytes, n);
        for (int64_t j = 0; j < n; ++j) d.f16[static_cast<size_t>(i * n + j)] = fp32_to_fp16(row[static_cast<size_t>(j)]);
    }
    return d;
}

void register_all() {
    const bool avx2 = cpu_simd_level() >= SimdLevel::Avx2;
    for (int64_t rows : {4096, 64}) {
        const int64_t n = 128;
        for (const bool simd : {false, true}) {
            if (simd && !avx2) continue;
            const std::string level = simd ? "avx2" : "scalar";
            const std::string tail = "/" + std::to_string(n) + "/" + std::to_string(rows);
            const Q8RowKernels& q8 = simd ? q8_row_kernels_avx2() : q8_row_kernels_scalar();
            const F16RowKernels& f16 = simd ? f16_row_kernels_avx2() : f16_row_kernels_scalar();
            benchmark::RegisterBenchmark(("kv_rows/q8_0/" + level + "/dots" + tail).c_str(), [=, &q8](benchmark::State& s) {
                Data d = make_data(n, rows);
                for (auto _ : s) {
                    q8.dots(d.q.data(), d.q8.data(), d.q8_row_bytes, rows, n, 0.088f, d.out.data());
                    benchmark::DoNotOptimize(d.out.data());
                }
                s.SetItemsProcessed(s.iterations() * rows);
            });
            // A kv head's group of 8 query heads at once (the queries: one row repeated), counted
            // in (row, head) pairs, against 8 calls of dots: the same count.
            benchmark::RegisterBenchmark(("kv_rows/q8_0/" + level + "/dots_8_heads" + tail).c_str(), [=, &q8](benchmark::State& s) {
                Data d = make_data(n, rows);
                std::vector<float> q8_heads, scores(static_cast<size_t>(8 * rows));
                for (int h = 0; h < 8; ++h) q8_heads.insert(q8_heads.end(), d.q.begin(), d.q.end());
                for (auto _ : s) {
                    q8.dots_heads(q8_heads.data(), n, 8, d.q8.data(), d.q8_row_bytes, rows, n, 0.088f, scores.data(), rows);
                    benchmark::DoNotOptimize(scores.data());
                }
                s.SetItemsProcessed(s.iterations() * rows * 8);
            });
            benchmark::RegisterBenchmark(("kv_rows/q8_0/" + level + "/accumulate" + tail).c_str(), [=, &q8](benchmark::State& s) {
                Data d = make_data(n, rows);
                for (auto _ : s) {
                    q8.accumulate(d.weights.data(), 0.01f, d.q8.data(), d.q8_row_bytes, rows, n, d.out.data());
                    benchmark::DoNotOptimize(d.out.data());
                }
                s.SetItemsProcessed(s.iterations() * rows);
            });
            benchmark::RegisterBenchmark(("kv_rows/f16/" + level + "/dots" + tail).c_str(), [=, &f16](benchmark::State& s) {
                Data d = make_data(n, rows);
                for (auto _ : s) {
                    f16.dots(d.q.data(), d.f16.data(), n, rows, n, 0.088f, d.out.data());
                    benchmark::DoNotOptimize(d.out.data());
                }
                s.SetItemsProcessed(s.iterations() * rows);
            });
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
