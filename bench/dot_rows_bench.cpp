// Single-row against multi-row dot kernels (quant/cpu/dot_rows.h), one thread (and every thread
// at once, below): every row of a weight working set dotted with one activation row (n = 2048,
// the hidden size of the decode benchmark's model), the way the CPU matmul walks a row block. Reported as bytes of weights
// read per second; both variants give the same bits, so only the speed differs.
//
//   build/bin/dot_rows_bench --benchmark_filter=Q4_K
//
// Names: dot_rows/<TYPE>/<level>/<walk>/<pages>/<size>, every SIMD level this CPU runs; walk one of
//   single: a loop of the single-row kernel over each block of `kBlock` rows (the matmul before);
//   rows: the multi-row kernel per block (four rows side by side: what the matmul now runs for a
//           block's second and later tokens, when the block is in cache);
//   rows_x4, tile_x4: four activation rows against the rows (a prompt's later tokens, rows in
//           cache): the multi-row kernel once per token, or the tile kernel once; bytes count
//           each weight byte once per token; 1MiB and 64KiB only.
//   ahead<D>: the single-row loop with a software prefetch of the row D bytes ahead before each
//           row, as the matmul streams a block for its first token (backend/cpu/matmul.cpp's
//           window: 4096 there for one-token products on 8+ threads, else 2048); 64MiB only.
//   pages huge: weights in a 2 MiB-aligned buffer with transparent huge pages (as the bandwidth
//           probes use); pages 4k: an anonymous mapping with huge pages refused, like the
//           page-cache mapping that holds a model's weights (the hardware prefetchers stop at
//           each 4 KiB page and every page needs its own TLB entry).
//   .../each/threads:N: N threads (every CPU) each walk their own 64 MiB at once, 4 KiB pages,
//           the single walk and the ahead<D> walks of this CPU's best level: bytes summed over the
//           threads, per second of wall time.
//   64MiB streams from DRAM (decode); 64KiB stays in L2 (a row block that the matmul reads again
//   for every further token of a batch); 1MiB is one Zen 4 core's whole L2, partly L3.

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_buffer.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/cpu/dot_rows.h"
#include "quant/traits.h"

namespace strata {
namespace {

constexpr int64_t kRowLength = 2048;
constexpr int64_t kBlock = 16;  // rows per call, the matmul's row block

// Weight memory of either kind, freed on destruction.
class Weights {
public:
    Weights(size_t bytes, bool huge) : bytes_(bytes) {
        if (huge) {
            buffer_ = AlignedBuffer(bytes);
            data_ = buffer_.data();
            return;
        }
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        madvise(p, bytes, MADV_NOHUGEPAGE);
        data_ = static_cast<uint8_t*>(p);
        mapped_ = true;
    }
    ~Weights() {
        if (mapped_) munmap(data_, bytes_);
    }
    Weights(const Weights&) = delete;
    Weights& operator=(const Weights&) = delete;
    uint8_t* data() const { return data_; }

private:
    size_t bytes_;
    AlignedBuffer buffer_;
    uint8_t* data_ = nullptr;
    bool mapped_ = false;
};

struct Case {
    TensorType type;
    SimdLevel level;
    bool huge;
    size_t bytes;
};

enum class Walk { Single, Rows, Ahead, Rows4, Tile4 };
constexpr int kTileTokens = 4;

void bench_rows(benchmark::State& state, Case c, Walk walk, uint64_t ahead_bytes = 0) {
    const QuantTraits& traits = quant_traits(c.type);
    const uint64_t row_bytes = tensor_type_info(c.type)->row_bytes(kRowLength);
    const int64_t rows = static_cast<int64_t>(c.bytes / row_bytes) / kBlock * kBlock;
    Weights weights(static_cast<size_t>(rows) * row_bytes, c.huge);
    if (!weights.data()) {
        state.SkipWithError("mmap failed");
        return;
    }
    // A few distinct quantized rows, tiled (the kernels' speed does not depend on the values).
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(kRowLength);
    constexpr int64_t kDistinct = 8;
    std::vector<uint8_t> distinct(static_cast<size_t>(kDistinct * row_bytes));
    for (int64_t r = 0; r < kDistinct; ++r) {
        for (float& v : x) v = normal(rng);
        traits.quantize_row(x.data(), distinct.data() + r * row_bytes, kRowLength);
    }
    for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(weights.data() + static_cast<uint64_t>(r) * row_bytes, distinct.data() + (r % kDistinct) * row_bytes,
                    row_bytes);
    }
    const uint64_t act_bytes = tensor_type_info(traits.dot_type)->row_bytes(kRowLength);
    std::vector<uint8_t> acts(static_cast<size_t>(kTileTokens * act_bytes));
    std::vector<const void*> act_rows;
    for (int t = 0; t < kTileTokens; ++t) {
        for (float& v : x) v = normal(rng);
        quant_traits(traits.dot_type).quantize_row(x.data(), acts.data() + t * act_bytes, kRowLength);
        act_rows.push_back(acts.data() + t * act_bytes);
    }
    const uint8_t* act = acts.data();

    const DotFn dot = cpu_dot_kernel_exact(c.type, c.level);
    const DotRowsFn dot_rows = cpu_dot_rows_kernel_exact(c.type, c.level);
    const DotTileFn dot_tile = cpu_dot_tile_kernel_exact(c.type, c.level);
    const bool four = walk == Walk::Rows4 || walk == Walk::Tile4;
    std::vector<float> out(static_cast<size_t>(rows) * (four ? kTileTokens : 1));
    for (auto _ : state) {
        for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
            const uint8_t* w = weights.data() + static_cast<uint64_t>(r0) * row_bytes;
            if (walk == Walk::Tile4) {
                dot_tile(w, row_bytes, act_rows.data(), kTileTokens, kRowLength, kBlock, out.data() + r0, rows);
            } else if (walk == Walk::Rows4) {
                for (int t = 0; t < kTileTokens; ++t)
                    dot_rows(w, row_bytes, act_rows[static_cast<size_t>(t)], kRowLength, kBlock, out.data() + t * rows + r0);
            } else if (walk == Walk::Rows) {
                dot_rows(w, row_bytes, act, kRowLength, kBlock, out.data() + r0);
            } else if (walk == Walk::Ahead) {
                const uint8_t* end = weights.data() + static_cast<uint64_t>(rows) * row_bytes;
                for (int64_t r = 0; r < kBlock; ++r) {
                    const uint8_t* row = w + r * row_bytes;
                    for (const uint8_t* line = row + ahead_bytes; line < std::min(end, row + ahead_bytes + row_bytes); line += 64)
                        __builtin_prefetch(line, 0, 3);
                    out[static_cast<size_t>(r0 + r)] = dot(row, act, kRowLength);
                }
            } else {
                for (int64_t r = 0; r < kBlock; ++r) out[static_cast<size_t>(r0 + r)] = dot(w + r * row_bytes, act, kRowLength);
            }
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    // Four tokens: weight bytes times the tokens they meet (products of one token's worth).
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * rows * static_cast<int64_t>(row_bytes) *
                            (four ? kTileTokens : 1));
}

std::string size_label(size_t bytes) {
    return bytes >= (size_t(1) << 20) ? std::to_string(bytes >> 20) + "MiB" : std::to_string(bytes >> 10) + "KiB";
}

void register_benchmarks() {
    for (TensorType type : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q5_K, TensorType::Q3_K, TensorType::Q2_K}) {
        for (SimdLevel level : {SimdLevel::Avx512, SimdLevel::Avx2}) {
            if (level > cpu_simd_level() || !cpu_dot_rows_kernel_exact(type, level)) continue;
            for (size_t bytes : {size_t(64) << 20, size_t(1) << 20, size_t(64) << 10}) {
                for (bool huge : {false, true}) {
                    // The walks back to back, so each pair shares the machine's state.
                    for (Walk walk : {Walk::Single, Walk::Rows}) {
                        const std::string name = "dot_rows/" + std::string(tensor_type_name(type)) + "/" +
                                                 std::string(simd_level_name(level)) + "/" +
                                                 (walk == Walk::Single ? "single" : "rows") + "/" +
                                                 (huge ? "huge" : "4k") + "/" + size_label(bytes);
                        benchmark::RegisterBenchmark(name.c_str(), bench_rows, Case{type, level, huge, bytes}, walk, 0)
                            ->Unit(benchmark::kMillisecond);
                    }
                    // Four tokens against rows in cache (a prompt's later tokens): the multi-row
                    // kernel once per token, or the tile kernel once.
                    if (bytes < (size_t(64) << 20) && cpu_dot_tile_kernel_exact(type, level)) {
                        for (Walk walk : {Walk::Rows4, Walk::Tile4}) {
                            const std::string name = "dot_rows/" + std::string(tensor_type_name(type)) + "/" +
                                                     std::string(simd_level_name(level)) + "/" +
                                                     (walk == Walk::Rows4 ? "rows_x4" : "tile_x4") + "/" +
                                                     (huge ? "huge" : "4k") + "/" + size_label(bytes);
                            benchmark::RegisterBenchmark(name.c_str(), bench_rows, Case{type, level, huge, bytes}, walk, 0)
                                ->Unit(benchmark::kMillisecond);
                        }
                    }
                    if (bytes < (size_t(64) << 20)) continue;
                    for (uint64_t ahead : {1024, 2048, 4096, 8192}) {
                        const std::string name = "dot_rows/" + std::string(tensor_type_name(type)) + "/" +
                                                 std::string(simd_level_name(level)) + "/ahead" + std::to_string(ahead) + "/" +
                                                 (huge ? "huge" : "4k") + "/" + size_label(bytes);
                        benchmark::RegisterBenchmark(name.c_str(), bench_rows, Case{type, level, huge, bytes}, Walk::Ahead, ahead)
                            ->Unit(benchmark::kMillisecond);
                    }
                    // Every core streaming its own rows at once (a decode step's matmul): whether
                    // the window still pays when the cores share the memory bus.
                    if (huge || level != cpu_simd_level()) continue;
                    for (uint64_t ahead : {0, 2048, 4096, 8192}) {
                        const std::string name = "dot_rows/" + std::string(tensor_type_name(type)) + "/" +
                                                 std::string(simd_level_name(level)) + "/" +
                                                 (ahead ? "ahead" + std::to_string(ahead) : std::string("single")) +
                                                 "/4k/" + size_label(bytes) + "/each";
                        benchmark::RegisterBenchmark(name.c_str(), bench_rows, Case{type, level, huge, bytes},
                                                     ahead ? Walk::Ahead : Walk::Single, ahead)
                            ->Unit(benchmark::kMillisecond)
                            ->Threads(benchmark::CPUInfo::Get().num_cpus)
                            ->UseRealTime();
                    }
                }
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
