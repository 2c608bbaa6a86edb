// The CPU matmul (backend/cpu/matmul.h) gives, bit for bit, what one call of the single-row dot
// kernel per (token, output row) gives on the once-quantized activation, whichever kernel it
// takes: tiles (quant/cpu/dot_rows.h) for groups of up to four tokens, the first group streaming,
// the multi-row kernel for a lone later token, the single-row loop for a lone first token or a
// type without them. Covered: 1, 2, 5 and 9 tokens (groups and their tails), row
// counts that end in a partial 16-row block, one and several tokens, a matrix of a stacked expert
// tensor, the grouped path with jobs that share their input (MoE gate/up) or not, and jobs that
// name their tokens' rows of a shared input (the routed experts).

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/cpu/matmul.h"
#include "core/thread_pool.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/traits.h"

namespace strata {
namespace {

// A stacked [n_in, n_out, n_matrices] weight of `type`, quantized from random values.
struct TestWeight {
    std::vector<uint8_t> bytes;
    Weight w;
};

TestWeight make_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng) {
    TestWeight t;
    const QuantTraits& traits = quant_traits(type);
    t.w.type = type;
    t.w.ne[0] = n_in;
    t.w.ne[1] = n_out;
    t.w.ne[2] = n_matrices;
    t.w.row_bytes = tensor_type_info(type)->row_bytes(static_cast<uint64_t>(n_in));
    const int64_t rows = n_out * n_matrices;
    t.bytes.resize(static_cast<size_t>(t.w.row_bytes * static_cast<uint64_t>(rows)));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n_in));
    for (int64_t r = 0; r < rows; ++r) {
        for (float& v : x) v = normal(rng) + (r % 3 == 0 ? 0.7f : 0.0f);
        traits.quantize_row(x.data(), t.bytes.data() + static_cast<uint64_t>(r) * t.w.row_bytes, n_in);
    }
    t.w.data = t.bytes.data();
    return t;
}

std::vector<float> random_input(int64_t n_in, int64_t n_tokens, std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n_in * n_tokens));
    for (float& v : x) v = normal(rng);
    return x;
}

// y[t][o] by one single-row kernel call each, on x quantized to the dot type as the matmul does.
std::vector<float> reference(const Weight& w, int64_t matrix, const std::vector<float>& x, int64_t n_tokens) {
    const QuantTraits& traits = quant_traits(w.type);
    const int64_t n_in = w.ne[0], n_out = w.ne[1];
    const uint64_t act_bytes = tensor_type_info(traits.dot_type)->row_bytes(static_cast<uint64_t>(n_in));
    std::vector<uint8_t> act(static_cast<size_t>(act_bytes));
    const DotFn dot = cpu_dot_kernel(w.type);
    std::vector<float> y(static_cast<size_t>(n_out * n_tokens));
    for (int64_t t = 0; t < n_tokens; ++t) {
        quant_traits(traits.dot_type).quantize_row(x.data() + t * n_in, act.data(), n_in);
        for (int64_t o = 0; o < n_out; ++o) {
            y[static_cast<size_t>(t * n_out + o)] = dot(w.matrix(matrix) + static_cast<uint64_t>(o) * w.row_bytes, act.data(), n_in);
        }
    }
    return y;
}

void expect_same_bits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
            << what << ", element " << i << ": got " << got[i] << ", want " << want[i];
    }
}

class CpuMatmul : public ::testing::TestWithParam<TensorType> {};

TEST_P(CpuMatmul, SameBitsAsTheSingleRowKernel) {
    const TensorType type = GetParam();
    std::mt19937 rng(17);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    const int64_t n_in = 512;
    for (int64_t n_out : {1, 5, 16, 37, 67}) {
        const TestWeight tw = make_weight(type, n_in, n_out, 3, rng);
        for (int64_t n_tokens : {1, 2, 5, 9}) {
            const std::vector<float> x = random_input(n_in, n_tokens, rng);
            std::vector<float> y(static_cast<size_t>(n_out * n_tokens), -1.0f);
            cpu_matmul(tw.w, 2, x.data(), n_tokens, y.data(), ctx);
            expect_same_bits(y, reference(tw.w, 2, x, n_tokens),
                             "n_out " + std::to_string(n_out) + ", tokens " + std::to_string(n_tokens));
        }
    }
}

TEST_P(CpuMatmul, GroupedJobsSameBitsAsAlone) {
    // As a MoE layer runs its selected experts: gate and up of each expert share an input, and
    // each expert has its own (with a Q8_0 job mixed in, which has no multi-row kernel).
    const TensorType type = GetParam();
    std::mt19937 rng(29);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    const int64_t n_in = 768, n_out = 45;
    const TestWeight gate = make_weight(type, n_in, n_out, 4, rng);
    const TestWeight up = make_weight(type, n_in, n_out, 4, rng);
    const TestWeight other = make_weight(TensorType::Q8_0, n_in, 19, 1, rng);
    const int64_t tokens[3] = {1, 3, 2};
    std::vector<std::vector<float>> x, y;
    std::vector<MatmulJob> jobs;
    std::vector<std::vector<float>> want;
    x.reserve(3);
    y.reserve(7);
    for (int e = 0; e < 3; ++e) {
        x.push_back(random_input(n_in, tokens[e], rng));
        for (const TestWeight* w : {&gate, &up}) {
            y.emplace_back(static_cast<size_t>(n_out * tokens[e]), -1.0f);
            jobs.push_back(MatmulJob{&w->w, e + 1, x.back().data(), tokens[e], y.back().data()});
            want.push_back(reference(w->w, e + 1, x.back(), tokens[e]));
        }
    }
    y.emplace_back(static_cast<size_t>(19 * tokens[1]), -1.0f);
    jobs.push_back(MatmulJob{&other.w, 0, x[1].data(), tokens[1], y.back().data()});
    want.push_back(reference(other.w, 0, x[1], tokens[1]));
    cpu_matmul_grouped(jobs, ctx);
    for (size_t j = 0; j < jobs.size(); ++j) expect_same_bits(y[j], want[j], "job " + std::to_string(j));
}

TEST_P(CpuMatmul, OneTokenJobsSameBitsAsAlone) {
    // A decode step's expert pass: one token per job, so claims are uncapped and run across job
    // boundaries, each run's prefetch continuing into the next job's rows. Jobs of other sizes
    // and jobs with no token sit between them; 2 and 3 threads split the blocks differently.
    const TensorType type = GetParam();
    std::mt19937 rng(41);
    const int64_t n_in = 512;
    const TestWeight big = make_weight(type, n_in, 77, 3, rng);
    const TestWeight small = make_weight(type, n_in, 5, 2, rng);
    const std::vector<float> x = random_input(n_in, 1, rng);
    for (int threads : {2, 3}) {
        ThreadPool pool(ThreadPool::Options{.threads = threads});
        CpuContext ctx(pool);
        std::vector<MatmulJob> jobs;
        std::vector<std::vector<float>> y, want;
        y.reserve(8);
        const auto add = [&](const TestWeight& w, int64_t matrix, int64_t n_tokens) {
            y.emplace_back(static_cast<size_t>(w.w.ne[1] * n_tokens), -1.0f);
            jobs.push_back(MatmulJob{&w.w, matrix, x.data(), n_tokens, y.back().data()});
            want.push_back(reference(w.w, matrix, x, n_tokens));
        };
        add(big, 0, 1);
        add(small, 1, 0);
        add(small, 1, 1);
        add(big, 2, 1);
        add(small, 0, 1);
        add(big, 1, 0);
        add(big, 1, 1);
        cpu_matmul_grouped(jobs, ctx);
        for (size_t j = 0; j < jobs.size(); ++j)
            expect_same_bits(y[j], want[j], std::to_string(threads) + " threads, job " + std::to_string(j));
    }
}

TEST_P(CpuMatmul, JobsNamingRowsSameBitsAsCopiedRows) {
    // As the routed experts read the batch: each job names its tokens' rows of one shared input
    // (in any order, a row more than once) instead of a gathered copy; a Q8_0 job names rows too.
    const TensorType type = GetParam();
    std::mt19937 rng(41);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    const int64_t n_in = 512, n_out = 37, n_tokens = 5;
    const TestWeight gate = make_weight(type, n_in, n_out, 3, rng);
    const TestWeight other = make_weight(TensorType::Q8_0, n_in, 19, 1, rng);
    const std::vector<float> x = random_input(n_in, n_tokens, rng);
    const std::vector<std::vector<int32_t>> rows = {{3}, {0, 4, 1}, {2, 2}, {4, 3, 2, 1, 0}};
    std::vector<std::vector<float>> y, want;
    std::vector<MatmulJob> jobs;
    y.reserve(rows.size() + 1);
    for (size_t j = 0; j <= rows.size(); ++j) {
        const std::vector<int32_t>& r = rows[j % rows.size()];
        const auto m = static_cast<int64_t>(r.size());
        const TestWeight& w = j < rows.size() ? gate : other;
        std::vector<float> copied;
        for (int32_t t : r) copied.insert(copied.end(), x.begin() + t * n_in, x.begin() + (t + 1) * n_in);
        want.push_back(reference(w.w, j < rows.size() ? static_cast<int64_t>(j % 3) : 0, copied, m));
        y.emplace_back(static_cast<size_t>(w.w.ne[1] * m), -1.0f);
        jobs.push_back(MatmulJob{&w.w, j < rows.size() ? static_cast<int64_t>(j % 3) : 0, x.data(), m, y.back().data(),
                                 r.data(), n_tokens});
    }
    cpu_matmul_grouped(jobs, ctx);
    for (size_t j = 0; j < jobs.size(); ++j) expect_same_bits(y[j], want[j], "job " + std::to_string(j));

    const int32_t outside[] = {0, static_cast<int32_t>(n_tokens)};
    const MatmulJob bad{&gate.w, 0, x.data(), 2, y[0].data(), outside, n_tokens};
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(cpu_matmul_grouped(std::span<const MatmulJob>(&bad, 1), ctx), "matmul input row outside its input");
}

std::string type_name(const ::testing::TestParamInfo<TensorType>& info) {
    return std::string(tensor_type_name(info.param));
}

// The types with tiles and multi-row kernels, and Q8_0 for the single-row fallback.
INSTANTIATE_TEST_SUITE_P(Types, CpuMatmul,
                         ::testing::Values(TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                                           TensorType::Q6_K, TensorType::Q8_0),
                         type_name);

}  // namespace
}  // namespace strata
