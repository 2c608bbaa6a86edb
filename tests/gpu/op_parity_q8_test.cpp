// The int8 matrix-vector path (ops_matvec_q8.cu): activation quantization, then the packed-weight
// dot products for every format it reads, dense and per expert. Each product is checked against
// the exact product of the dequantized weights with the dequantized int8 activations (the only
// difference left is float summation order), and against the CPU op (which quantizes the
// activations its own way). Skips without a GPU (op_parity.h).
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include <cmath>

#include "backend/cpu/matmul.h"
#include "core/thread_pool.h"

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

// The quantization gpu_quantize_q8 documents: per block of 32, d = max|x| / 127, q = round(x / d).
struct HostQ8 {
    std::vector<int8_t> q;
    std::vector<float> ds;  // (d, d·Σq) per block
    std::vector<float> values() const {
        std::vector<float> v(q.size());
        for (size_t i = 0; i < q.size(); ++i) v[i] = ds[2 * (i / 32)] * static_cast<float>(q[i]);
        return v;
    }
};
HostQ8 host_quantize(const std::vector<float>& x) {
    HostQ8 r;
    r.q.resize(x.size());
    for (size_t b = 0; b < x.size() / 32; ++b) {
        float amax = 0.0f;
        for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[32 * b + i]));
        const float d = amax / 127.0f;
        int sum = 0;
        for (size_t i = 0; i < 32; ++i) {
            const int q = d > 0.0f ? static_cast<int>(std::round(x[32 * b + i] / d)) : 0;
            r.q[32 * b + i] = static_cast<int8_t>(q);
            sum += q;
        }
        r.ds.push_back(d);
        r.ds.push_back(d * static_cast<float>(sum));
    }
    return r;
}

// y[c] = W_{matrix_of(c)} · x[x_row_of(c)], weights dequantized by the scalar reference, in double.
template <typename MatrixOf, typename XRowOf>
std::vector<float> exact_products(const HostWeight& w, const std::vector<float>& x, int64_t n_cols, MatrixOf matrix_of,
                                  XRowOf x_row_of) {
    const int64_t n_in = w.view.ne[0], n_out = w.view.ne[1];
    std::vector<float> row(static_cast<size_t>(n_in)), y(static_cast<size_t>(n_cols * n_out));
    for (int64_t c = 0; c < n_cols; ++c) {
        const float* xr = x.data() + x_row_of(c) * n_in;
        for (int64_t o = 0; o < n_out; ++o) {
            quant_traits(w.view.type).dequantize_row(w.view.matrix(matrix_of(c)) + static_cast<uint64_t>(o) * w.view.row_bytes,
                                                     row.data(), n_in);
            double s = 0.0;
            for (int64_t i = 0; i < n_in; ++i) s += static_cast<double>(row[static_cast<size_t>(i)]) * xr[i];
            y[static_cast<size_t>(c * n_out + o)] = static_cast<float>(s);
        }
    }
    return y;
}

std::vector<TensorType> q8_types() {
    using T = TensorType;
    return {T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0, T::Q4_K, T::Q5_K, T::Q6_K};
}

class GpuQ8 : public GpuOpTest {};

TEST_F(GpuQ8, QuantizeMatchesTheDocumentedRule) {
    std::mt19937 rng(11);
    const int64_t rows = 3, n_in = 2048 + 96;  // a partial last thread block
    std::vector<float> x = random_floats(rng, static_cast<size_t>(rows * n_in));
    for (int i = 0; i < 32; ++i) x[static_cast<size_t>(64 + i)] = 0.0f;  // an all-zero block: d = 0
    const HostQ8 want = host_quantize(x);
    const gpu::GpuQ8Rows got = gpu::gpu_quantize_q8(to_device(x), rows, n_in, 0, ctx());
    const std::vector<int8_t> q = from_device(got.q, want.q.size());
    const std::vector<float> ds = from_device(got.ds, want.ds.size());
    int64_t q_diff = 0;
    for (size_t i = 0; i < q.size(); ++i) q_diff += q[i] != want.q[i];
    EXPECT_EQ(q_diff, 0) << "int8 values differ from round(x / d)";
    EXPECT_NMSE("quantize_q8 scales and sums", ds, want.ds, 1e-14);
    EXPECT_EQ(ds[2 * 2], 0.0f);
    EXPECT_EQ(ds[2 * 2 + 1], 0.0f);
}

// Rows of 256 (8 or 4 units: narrow lane groups), 768 (12 K-quant units), 2048 and 4096 (one and
// two units per lane); 1, 3, 8 and 13 tokens (two column tiles, the second partial); odd output
// counts; matrix 2 of a stacked tensor; legacy rows that start off a word boundary.
TEST_F(GpuQ8, DenseMatvecEveryFormat) {
    struct Shape { int64_t n_in, n_out, n_tokens, n_matrices, matrix; };
    const Shape shapes[] = {{256, 33, 1, 1, 0}, {768, 64, 3, 1, 0}, {2048, 45, 8, 1, 0},
                            {4096, 20, 13, 1, 0}, {512, 40, 2, 3, 2}};
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    std::mt19937 rng(12);
    for (TensorType type : q8_types()) {
        for (const Shape& s : shapes) {
            HostWeight w = make_weight(type, s.n_in, s.n_out, s.n_matrices, rng);
            const gpu::DeviceWeight dw = to_device(w);
            ASSERT_TRUE(gpu::gpu_matvec_takes_q8(dw)) << tensor_type_name(type);
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.n_tokens * s.n_in));
            const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(x), s.n_tokens, s.n_in, 0, ctx());
            float* y = device_zeros<float>(static_cast<size_t>(s.n_tokens * s.n_out));
            gpu::gpu_matmul(dw, s.matrix, nullptr, s.n_tokens, y, ctx(), &xq);  // x unused by the int8 kernel
            const std::vector<float> got = from_device(y, static_cast<size_t>(s.n_tokens * s.n_out));
            const std::string name = fmt::format("matvec_q8 {} [{}, {}]x{} n={}", tensor_type_name(type), s.n_in, s.n_out,
                                                 s.n_matrices, s.n_tokens);
            const std::vector<float> xv = host_quantize(x).values();
            const auto same_matrix = [&](int64_t) { return s.matrix; };
            const auto own_row = [](int64_t c) { return c; };
            EXPECT_NMSE(name + " vs exact", got, exact_products(w, xv, s.n_tokens, same_matrix, own_row), 1e-10);
            std::vector<float> want(got.size());
            cpu_matmul(w.view, s.matrix, x.data(), s.n_tokens, want.data(), cpu);
            EXPECT_NMSE(name + " vs cpu", got, want, 5e-4);
        }
    }
}

// Expert products through a plan: one token (fixed plan) and 5 tokens (sorted tiles), x read per
// token (gate/up) and per pair (down).
TEST_F(GpuQ8, ExpertMatvecThroughPlans) {
    std::mt19937 rng(13);
    const int64_t n_exp = 6, k = 3, n_in = 512, n_out = 72;
    for (TensorType type : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0}) {
        HostWeight w = make_weight(type, n_in, n_out, n_exp, rng);
        const gpu::DeviceWeight dw = to_device(w);
        for (int64_t n : {1, 5}) {
            const int64_t pairs = n * k;
            std::vector<int32_t> ids(static_cast<size_t>(pairs));
            for (int64_t t = 0; t < n; ++t) {
                for (int64_t j = 0; j < k; ++j) ids[static_cast<size_t>(t * k + j)] = static_cast<int32_t>((t * 5 + j * 2 + 1) % n_exp);
            }
            const gpu::MoePlan plan = gpu::gpu_moe_plan(to_device(ids), pairs, n_exp, 4, ctx());
            for (int64_t per_row : {k, int64_t{1}}) {
                const int64_t x_rows = pairs / per_row;
                const std::vector<float> x = random_floats(rng, static_cast<size_t>(x_rows * n_in));
                const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(x), x_rows, n_in, 0, ctx());
                float* y = device_zeros<float>(static_cast<size_t>(pairs * n_out));
                gpu::gpu_matmul_experts(dw, plan, nullptr, per_row, y, ctx(), &xq);
                const std::vector<float> got = from_device(y, static_cast<size_t>(pairs * n_out));
                const std::vector<float> xv = host_quantize(x).values();
                const auto expert = [&](int64_t p) { return static_cast<int64_t>(ids[static_cast<size_t>(p)]); };
                const auto x_row = [&](int64_t p) { return p / per_row; };
                EXPECT_NMSE(fmt::format("matvec_q8 experts {} [{}, {}]x{} top {} n={} x per {}", tensor_type_name(type), n_in,
                                        n_out, n_exp, k, n, per_row == 1 ? "pair" : "token"),
                            got, exact_products(w, xv, pairs, expert, x_row), 1e-10);
            }
        }
    }
}

#else

TEST(GpuQ8, SkippedWithoutGpuSupport) {
    const std::string why = gpu_unavailable_reason();
    EXPECT_NE(why.find("no GPU support in this build"), std::string::npos) << why;
    GTEST_SKIP() << why;
}

#endif

}  // namespace
}  // namespace strata::test
