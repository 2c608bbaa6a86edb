// Single-thread throughput of the CPU dot kernels (quant/cpu/dot_kernels.h): every type that has a
// SIMD kernel, at the scalar reference and at every SIMD level this CPU runs, dotting each row of
// a weight working set with one activation row (n = 4096). Reported as bytes of weights read per
// second, next to the machine's single-thread read bandwidth measured in the same run
// (read_bandwidth/avx2: a plain AVX2 sum over a buffer of the same size).
//
//   build/bin/quant_dot_bench                                  # everything (~2 minutes)
//   build/bin/quant_dot_bench --benchmark_filter='bandwidth|Q4_K'
//
// dot/<TYPE>/<level>/64MiB streams from DRAM (the working set is larger than L2 and L3), the
// case a matrix-vector product over model weights meets; dot/<TYPE>/<level>/1MiB stays in L2 and
// shows how far the kernel's arithmetic is from the memory limit.

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/traits.h"

namespace strata {
namespace {

constexpr int64_t kRowLength = 4096;
constexpr size_t kColdBytes = size_t(64) << 20;
constexpr size_t kWarmBytes = size_t(1) << 20;

// Weight rows of one type filling `bytes`, and one activation row. Rows are quantized from
// random normal values by the reference quantizer where the type has one (a few distinct rows,
// tiled), else random bytes; the kernels' speed does not depend on the values.
struct WorkingSet {
    TensorType type = TensorType::F32;
    size_t bytes = 0;
    AlignedBuffer weights;
    std::vector<uint8_t> activation;
    uint64_t row_bytes = 0;
    int64_t rows = 0;
};

WorkingSet make_working_set(TensorType type, size_t bytes) {
    const QuantTraits& traits = quant_traits(type);
    WorkingSet set;
    set.type = type;
    set.bytes = bytes;
    set.row_bytes = tensor_type_info(type)->row_bytes(kRowLength);
    set.rows = static_cast<int64_t>(bytes / set.row_bytes);
    set.weights = AlignedBuffer(static_cast<size_t>(set.rows) * set.row_bytes);

    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(kRowLength);
    constexpr int kDistinctRows = 8;
    std::vector<uint8_t> distinct(kDistinctRows * set.row_bytes);
    for (int r = 0; r < kDistinctRows; ++r) {
        uint8_t* row = distinct.data() + r * set.row_bytes;
        if (traits.quantize_row) {
            for (float& v : x) v = normal(rng);
            traits.quantize_row(x.data(), row, kRowLength);
        } else {
            for (uint64_t b = 0; b < set.row_bytes; ++b) row[b] = static_cast<uint8_t>(rng());
        }
    }
    for (int64_t r = 0; r < set.rows; ++r) {
        std::memcpy(set.weights.data() + r * set.row_bytes, distinct.data() + (r % kDistinctRows) * set.row_bytes,
                    set.row_bytes);
    }

    for (float& v : x) v = normal(rng);
    set.activation.resize(tensor_type_info(traits.dot_type)->row_bytes(kRowLength));
    quant_traits(traits.dot_type).quantize_row(x.data(), set.activation.data(), kRowLength);
    return set;
}

// One working set at a time (benchmarks run type by type), so at most 64 MiB is held.
const WorkingSet& working_set(TensorType type, size_t bytes) {
    static WorkingSet current;
    if (current.type != type || current.bytes != bytes || current.rows == 0) {
        current = WorkingSet();
        current = make_working_set(type, bytes);
    }
    return current;
}

void bench_dot(benchmark::State& state, TensorType type, DotFn dot, size_t bytes) {
    const WorkingSet& set = working_set(type, bytes);
    for (auto _ : state) {
        float sum = 0.0f;
        for (int64_t r = 0; r < set.rows; ++r) {
            sum += dot(set.weights.data() + r * set.row_bytes, set.activation.data(), kRowLength);
        }
        benchmark::DoNotOptimize(sum);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * set.rows * static_cast<int64_t>(set.row_bytes));
}

// The read bandwidth one core gets: 64-bit integer adds of every byte of the buffer, four
// independent accumulators so that the adds never wait on each other.
__attribute__((target("avx2"))) uint64_t sum_bytes_avx2(const uint8_t* p, size_t bytes) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (size_t i = 0; i + 128 <= bytes; i += 128) {
        for (int k = 0; k < 4; ++k) {
            acc[k] = _mm256_add_epi64(acc[k], _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32 * k)));
        }
    }
    const __m256i total = _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3]));
    uint64_t lanes[4];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), total);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

void bench_read_bandwidth(benchmark::State& state, size_t bytes) {
    AlignedBuffer buffer(bytes);
    std::memset(buffer.data(), 1, bytes);  // touch every page before timing
    for (auto _ : state) benchmark::DoNotOptimize(sum_bytes_avx2(buffer.data(), bytes));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

// Types with a kernel at any SIMD level, in table order (first seen first).
std::vector<TensorType> types_with_kernels() {
    std::vector<TensorType> types;
    for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
        size_t count = 0;
        const DotKernel* table = level == SimdLevel::Avx2 ? avx2_dot_kernels(&count) : avx512_dot_kernels(&count);
        for (size_t i = 0; i < count; ++i) {
            bool seen = false;
            for (TensorType t : types) seen = seen || t == table[i].type;
            if (table[i].dot && !seen) types.push_back(table[i].type);
        }
    }
    return types;
}

std::string size_label(size_t bytes) { return std::to_string(bytes >> 20) + "MiB"; }

void register_benchmarks() {
    for (size_t bytes : {kColdBytes, kWarmBytes}) {
        if (cpu_simd_level() >= SimdLevel::Avx2) {
            const std::string name = "read_bandwidth/avx2/" + size_label(bytes);
            benchmark::RegisterBenchmark(name.c_str(), bench_read_bandwidth, bytes)->Unit(benchmark::kMillisecond);
        }
    }
    for (TensorType type : types_with_kernels()) {
        for (size_t bytes : {kColdBytes, kWarmBytes}) {
            for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512}) {
                if (level > cpu_simd_level()) continue;
                const DotFn dot = cpu_dot_kernel_exact(type, level);
                if (!dot) continue;
                const std::string name = "dot/" + std::string(tensor_type_name(type)) + "/" +
                                         std::string(simd_level_name(level)) + "/" + size_label(bytes);
                benchmark::RegisterBenchmark(name.c_str(), bench_dot, type, dot, bytes)->Unit(benchmark::kMillisecond);
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
