// GPU ops vs CPU reference ops: embedding rows, matmul for every weight type, and the element-wise
// and per-row ops (see op_parity.h for the method and how to add a case). Skips without a GPU.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include "backend/cpu/matmul.h"
#include "backend/cpu/ops.h"
#include "core/fp16.h"
#include "core/thread_pool.h"

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

// Exact reference: weights dequantized by the scalar reference, products summed in double. With
// `f16`, both operands are first rounded to f16 (round to nearest even), as the tensor-core
// kernel stores them: what is left to differ is the f32 summation.
std::vector<float> exact_matmul(const HostWeight& w, int64_t matrix, const std::vector<float>& x, int64_t n_tokens,
                                bool f16 = false) {
    const int64_t n_in = w.view.ne[0], n_out = w.view.ne[1];
    const auto round = [f16](float v) { return f16 ? fp16_to_fp32(fp32_to_fp16(v)) : v; };
    std::vector<float> row(static_cast<size_t>(n_in)), y(static_cast<size_t>(n_tokens * n_out));
    for (int64_t o = 0; o < n_out; ++o) {
        quant_traits(w.view.type).dequantize_row(w.view.matrix(matrix) + static_cast<uint64_t>(o) * w.view.row_bytes,
                                                 row.data(), n_in);
        for (int64_t t = 0; t < n_tokens; ++t) {
            double s = 0.0;
            for (int64_t i = 0; i < n_in; ++i) {
                s += static_cast<double>(round(row[static_cast<size_t>(i)])) * round(x[static_cast<size_t>(t * n_in + i)]);
            }
            y[static_cast<size_t>(t * n_out + o)] = static_cast<float>(s);
        }
    }
    return y;
}

class GpuOps : public GpuOpTest {};

TEST_F(GpuOps, GetRowsEveryType) {
    std::mt19937 rng(1);
    for (TensorType type : gpu_weight_types()) {
        const int64_t n_embd = 512, n_vocab = 37;
        HostWeight w = make_weight(type, n_embd, n_vocab, 1, rng);
        const std::vector<int32_t> ids = {0, 36, 5, 5, 17, 1, 30};
        const int64_t n = static_cast<int64_t>(ids.size());
        std::vector<float> want(static_cast<size_t>(n * n_embd));
        cpu_get_rows(w.view, ids.data(), n, want.data());
        float* out = device_zeros<float>(want.size());
        gpu::gpu_get_rows(to_device(w), to_device(ids), n, out, ctx());
        EXPECT_NMSE(fmt::format("get_rows {} [{}, {}] n={}", tensor_type_name(type), n_embd, n_vocab, n),
                    from_device(out, want.size()), want, 1e-12);
    }
}

// Shapes: a decode row, a prefill batch that is not a multiple of the 8-column tile, an odd
// output count (partial last block), and matrix 2 of a stacked expert tensor.
TEST_F(GpuOps, MatmulEveryTypeAndShape) {
    struct Shape { int64_t n_in, n_out, n_tokens, n_matrices, matrix; };
    // From kGpuTiledMinTokens (32) tokens the shared-memory tiled kernel runs: partial row and column tiles.
    const Shape shapes[] = {{256, 64, 1, 1, 0}, {512, 96, 13, 1, 0}, {768, 33, 8, 1, 0}, {256, 40, 3, 4, 2},
                            {512, 96, 77, 1, 0}, {256, 130, 64, 3, 1}, {768, 64, 32, 1, 0},
                            // prompt batches through matrices of very few rows (a router of 4-8
                            // experts, a shared expert's one-row gate)
                            {256, 8, 32, 1, 0}, {256, 1, 40, 1, 0}, {256, 4, 33, 1, 0}};
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    std::mt19937 rng(2);
    for (TensorType type : gpu_weight_types()) {
        for (const Shape& s : shapes) {
            HostWeight w = make_weight(type, s.n_in, s.n_out, s.n_matrices, rng);
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.n_tokens * s.n_in));
            std::vector<float> want(static_cast<size_t>(s.n_tokens * s.n_out));
            cpu_matmul(w.view, s.matrix, x.data(), s.n_tokens, want.data(), cpu);
            float* y = device_zeros<float>(want.size());
            const gpu::DeviceWeight dw = to_device(w);
            gpu::gpu_matmul(dw, s.matrix, to_device(x), s.n_tokens, y, ctx());
            const std::vector<float> got = from_device(y, want.size());
            const bool f16 = s.n_tokens >= gpu::kGpuTiledMinTokens && gpu::gpu_tiled_matmul_f16(dw, ctx());
            const std::string name = fmt::format("matmul {} [{}, {}]x{} n={}{}", tensor_type_name(type), s.n_in, s.n_out,
                                                 s.n_matrices, s.n_tokens, f16 ? " (f16 tensor cores)" : "");
            // The CPU op quantizes activations to the weight's dot type (Q8_0/Q8_K/F16): ~1e-5;
            // rounding both operands to f16 adds about as much.
            EXPECT_NMSE(name + " vs cpu", got, want, 5e-4);
            // Against the exact product (of the f16-rounded operands on tensor cores) only the f32
            // summation differs.
            EXPECT_NMSE(name + " vs exact", got, exact_matmul(w, s.matrix, x, s.n_tokens, f16), 1e-10);
        }
    }
}

// Prompt batches through the small float matrices of the fixtures (rows of 64-128 values, one
// K slice or two, any number of outputs): the tiled / tensor-core kernels against the exact product.
TEST_F(GpuOps, SmallFloatMatricesPromptBatch) {
    std::mt19937 rng(22);
    for (TensorType type : {TensorType::F16, TensorType::F32}) {
        for (const int64_t n_in : {64, 128}) {
            for (const int64_t n_out : {1, 4, 8, 48, 64, 128, 160, 256}) {
                for (const int64_t n_tokens : {32, 33, 64}) {
                    HostWeight w = make_weight(type, n_in, n_out, 1, rng);
                    const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_tokens * n_in));
                    float* y = device_zeros<float>(static_cast<size_t>(n_tokens * n_out));
                    const gpu::DeviceWeight dw = to_device(w);
                    gpu::gpu_matmul(dw, 0, to_device(x), n_tokens, y, ctx());
                    const bool f16 = gpu::gpu_tiled_matmul_f16(dw, ctx());
                    EXPECT_NMSE(fmt::format("matmul {} [{}, {}] n={}{}", tensor_type_name(type), n_in, n_out, n_tokens,
                                            f16 ? " (f16 tensor cores)" : ""),
                                from_device(y, static_cast<size_t>(n_tokens * n_out)),
                                exact_matmul(w, 0, x, n_tokens, f16), 1e-10);
                }
            }
        }
    }
}

// Float rows that end in a part chunk (a fixture's shared expert of 48): the kernels read the
// tail value by value; other types and lengths that are not a multiple of 8 are refused.
TEST_F(GpuOps, FloatRowsWithAPartChunk) {
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    std::mt19937 rng(21);
    for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
        for (const int64_t n_in : {48, 40, 8, 72}) {
            for (const int64_t n_tokens : {1, 5}) {
                HostWeight w = make_weight(type, n_in, 37, 1, rng);
                const std::vector<float> x = random_floats(rng, static_cast<size_t>(n_tokens * n_in));
                float* y = device_zeros<float>(static_cast<size_t>(n_tokens * 37));
                gpu::gpu_matmul(to_device(w), 0, to_device(x), n_tokens, y, ctx());
                EXPECT_NMSE(fmt::format("matmul {} [{}, 37] n={} (part chunk)", tensor_type_name(type), n_in, n_tokens),
                            from_device(y, static_cast<size_t>(n_tokens * 37)), exact_matmul(w, 0, x, n_tokens), 1e-10);
            }
            const HostWeight table = make_weight(type, n_in, 37, 1, rng);
            const std::vector<int32_t> ids = {36, 0, 7};
            std::vector<float> want(static_cast<size_t>(3 * n_in));
            cpu_get_rows(table.view, ids.data(), 3, want.data());
            float* out = device_zeros<float>(want.size());
            gpu::gpu_get_rows(to_device(table), to_device(ids), 3, out, ctx());
            EXPECT_NMSE(fmt::format("get_rows {} [{}, 37] (part chunk)", tensor_type_name(type), n_in),
                        from_device(out, want.size()), want, 0.0);
        }
    }
    EXPECT_TRUE(gpu::gpu_supports_rows(TensorType::F16, 48));
    EXPECT_FALSE(gpu::gpu_supports_rows(TensorType::F16, 44));
    EXPECT_FALSE(gpu::gpu_supports_rows(TensorType::Q8_0, 48));
    EXPECT_TRUE(gpu::gpu_supports_rows(TensorType::Q8_0, 64));
}

TEST_F(GpuOps, RmsNorm) {
    std::mt19937 rng(3);
    struct Shape { int64_t rows, n; bool weight; };
    for (const Shape s : {Shape{5, 64, true}, Shape{3, 4096, true}, Shape{16, 128, false}}) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.rows * s.n), 3.0f);
        const std::vector<float> w = random_floats(rng, static_cast<size_t>(s.n));
        std::vector<float> want(x.size());
        cpu_rms_norm(x.data(), s.weight ? w.data() : nullptr, s.rows, s.n, 1e-6f, want.data());
        float* out = device_zeros<float>(x.size());
        gpu::gpu_rms_norm(to_device(x), s.weight ? to_device(w) : nullptr, s.rows, s.n, 1e-6f, out, ctx());
        EXPECT_NMSE(fmt::format("rms_norm [{}, {}]{}", s.n, s.rows, s.weight ? "" : " no weight"), from_device(out, x.size()),
                    want, 1e-11);
    }
}

TEST_F(GpuOps, RopeNormalNeoxPartial) {
    std::mt19937 rng(4);
    struct Case { RopeStyle style; int64_t head_dim, rope_dims, n_head; float base; };
    const Case cases[] = {{RopeStyle::Normal, 64, 64, 4, 10000.0f}, {RopeStyle::Neox, 128, 128, 8, 1e6f},
                          {RopeStyle::Normal, 64, 32, 2, 10000.0f}, {RopeStyle::Neox, 80, 40, 3, 5e5f}};
    const std::vector<int32_t> positions = {0, 1, 7, 255, 4095, 40000};
    const int64_t n = static_cast<int64_t>(positions.size());
    for (const Case& c : cases) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * c.n_head * c.head_dim));
        std::vector<float> want = x;
        cpu_rope(want.data(), n, c.n_head, RopeParams{c.style, c.head_dim, c.rope_dims, c.base}, positions.data());
        float* d = to_device(x);
        gpu::gpu_rope(d, n, c.n_head, gpu::GpuRope{c.style == RopeStyle::Neox, c.head_dim, c.rope_dims, c.base},
                      to_device(positions), ctx());
        EXPECT_NMSE(fmt::format("rope {} head {} rotating {} base {}", c.style == RopeStyle::Neox ? "neox" : "normal",
                                c.head_dim, c.rope_dims, c.base),
                    from_device(d, x.size()), want, 1e-11);
    }
}

TEST_F(GpuOps, ElementWise) {
    std::mt19937 rng(5);
    const int64_t rows = 7, n = 1000;
    const std::vector<float> a = random_floats(rng, static_cast<size_t>(rows * n), 4.0f);
    const std::vector<float> b = random_floats(rng, static_cast<size_t>(rows * n));
    const std::vector<float> bias = random_floats(rng, static_cast<size_t>(n));
    {
        std::vector<float> want = a;
        cpu_swiglu(want.data(), b.data(), rows * n);
        float* d = to_device(a);
        gpu::gpu_swiglu(d, to_device(b), rows * n, ctx());
        EXPECT_NMSE("swiglu [1000, 7]", from_device(d, a.size()), want, 1e-11);
    }
    {
        std::vector<float> want = a;
        cpu_add(want.data(), b.data(), rows * n);
        float* d = to_device(a);
        gpu::gpu_add(d, to_device(b), rows * n, ctx());
        EXPECT_NMSE("add [1000, 7]", from_device(d, a.size()), want, 1e-14);
    }
    {
        std::vector<float> want = a;
        cpu_add_bias(want.data(), bias.data(), rows, n);
        float* d = to_device(a);
        gpu::gpu_add_bias(d, to_device(bias), rows, n, ctx());
        EXPECT_NMSE("add_bias [1000, 7]", from_device(d, a.size()), want, 1e-14);
    }
    for (int64_t width : {8, 128, 1000}) {
        const std::vector<float> x(a.begin(), a.begin() + rows * width);
        std::vector<float> want = x;
        for (int64_t r = 0; r < rows; ++r) cpu_softmax(want.data() + r * width, width);
        float* d = to_device(x);
        gpu::gpu_softmax(d, rows, width, ctx());
        EXPECT_NMSE(fmt::format("softmax [{}, 7]", width), from_device(d, x.size()), want, 1e-11);
    }
}

#else

STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuOps)

#endif

}  // namespace
}  // namespace strata::test
