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
            gpu::MoePlan plan = gpu::gpu_moe_plan(to_device(ids), pairs, n_exp, 4, ctx());
            // One token: every tile holds one pair, which the plan may say (the one-column kernel).
            if (n == 1) plan.max_tile_pairs = 1;
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

float silu_times(double g, double u) { return static_cast<float>(g / (1.0 + std::exp(-g)) * u); }

// q, k and v of different formats in one launch, for a token and for a small batch.
TEST_F(GpuQ8, ManyProductsInOneLaunch) {
    std::mt19937 rng(14);
    const int64_t n_in = 1024;
    HostWeight wq = make_weight(TensorType::Q4_K, n_in, 200, 1, rng), wk = make_weight(TensorType::Q8_0, n_in, 64, 1, rng),
               wv = make_weight(TensorType::Q6_K, n_in, 72, 1, rng);
    const gpu::DeviceWeight dq = to_device(wq), dk = to_device(wk), dv = to_device(wv);
    for (int64_t n : {1, 5}) {
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * n_in));
        const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(x), n, n_in, 0, ctx());
        float* q = device_zeros<float>(static_cast<size_t>(n * 200));
        float* k = device_zeros<float>(static_cast<size_t>(n * 64));
        float* v = device_zeros<float>(static_cast<size_t>(n * 72));
        const gpu::GpuMatvecOut outs[] = {{&dq, q}, {&dk, k}, {&dv, v}};
        ASSERT_TRUE(gpu::gpu_matvec_q8_many(outs, 3, xq, n, ctx()));
        const std::vector<float> xv = host_quantize(x).values();
        const auto m0 = [](int64_t) { return int64_t{0}; };
        const auto own = [](int64_t c) { return c; };
        EXPECT_NMSE(fmt::format("matvec_q8 many: q Q4_K n={}", n), from_device(q, static_cast<size_t>(n * 200)),
                    exact_products(wq, xv, n, m0, own), 1e-10);
        EXPECT_NMSE(fmt::format("matvec_q8 many: k Q8_0 n={}", n), from_device(k, static_cast<size_t>(n * 64)),
                    exact_products(wk, xv, n, m0, own), 1e-10);
        EXPECT_NMSE(fmt::format("matvec_q8 many: v Q6_K n={}", n), from_device(v, static_cast<size_t>(n * 72)),
                    exact_products(wv, xv, n, m0, own), 1e-10);
    }
    // Not for the int8 kernel: a format it does not read, or a batch for the tiled kernel.
    HostWeight wf = make_weight(TensorType::F16, n_in, 8, 1, rng);
    const gpu::DeviceWeight df = to_device(wf);
    const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(random_floats(rng, static_cast<size_t>(n_in))), 1, n_in, 0, ctx());
    const gpu::GpuMatvecOut mixed[] = {{&dq, nullptr}, {&df, nullptr}};
    EXPECT_FALSE(gpu::gpu_matvec_q8_many(mixed, 2, xq, 1, ctx()));
    EXPECT_FALSE(gpu::gpu_matvec_q8_many(mixed, 1, xq, gpu::kGpuTiledMinTokens, ctx()));
}

// silu(gate · x) · (up · x) in one launch: dense, and per expert through a one-token plan.
TEST_F(GpuQ8, GateUpSwiglu) {
    std::mt19937 rng(15);
    const int64_t n_in = 512, n_out = 96, n_exp = 4, k = 2;
    for (TensorType type : {TensorType::Q4_K, TensorType::Q5_0}) {
        HostWeight gate = make_weight(type, n_in, n_out, n_exp, rng), up = make_weight(type, n_in, n_out, n_exp, rng);
        const gpu::DeviceWeight dg = to_device(gate), du = to_device(up);
        const std::vector<int32_t> ids = {3, 1, 0, 3, 2, 1};  // three tokens, top 2
        const int64_t n = 3, pairs = n * k;
        const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * n_in));
        const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(x), n, n_in, 0, ctx());
        const std::vector<float> xv = host_quantize(x).values();

        gpu::DeviceWeight dg1 = dg, du1 = du;  // matrix 0 alone, as a dense weight
        dg1.ne[2] = du1.ne[2] = 1;
        float* y = device_zeros<float>(static_cast<size_t>(n * n_out));
        ASSERT_TRUE(gpu::gpu_matvec_q8_swiglu(dg1, du1, xq, n, y, ctx()));
        const auto m0 = [](int64_t) { return int64_t{0}; };
        const auto own = [](int64_t c) { return c; };
        std::vector<float> g0 = exact_products(gate, xv, n, m0, own), u0 = exact_products(up, xv, n, m0, own), want(g0.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = silu_times(g0[i], u0[i]);
        EXPECT_NMSE(fmt::format("matvec_q8 gate_up_swiglu {} [{}, {}] n={}", tensor_type_name(type), n_in, n_out, n),
                    from_device(y, want.size()), want, 1e-9);

        const gpu::MoePlan plan = gpu::gpu_moe_plan(to_device(ids), pairs, n_exp, 4, ctx());
        float* ye = device_zeros<float>(static_cast<size_t>(pairs * n_out));
        ASSERT_TRUE(gpu::gpu_matvec_q8_swiglu_experts(dg, du, plan, xq, gpu::MoeRows::Pair, k, ye, gpu::MoeRows::Pair, ctx()));
        const auto expert = [&](int64_t p) { return static_cast<int64_t>(ids[static_cast<size_t>(p)]); };
        const auto token = [&](int64_t p) { return p / k; };
        g0 = exact_products(gate, xv, pairs, expert, token), u0 = exact_products(up, xv, pairs, expert, token);
        want.resize(g0.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = silu_times(g0[i], u0[i]);
        EXPECT_NMSE(fmt::format("matvec_q8 experts gate_up_swiglu {} [{}, {}]x{} top {} n={}", tensor_type_name(type), n_in,
                                n_out, n_exp, k, n),
                    from_device(ye, want.size()), want, 1e-9);
    }
}

// The norms that feed the products write h quantized too: the same bytes as quantizing their
// float output afterwards.
TEST_F(GpuQ8, NormsWriteTheirOutputQuantized) {
    std::mt19937 rng(16);
    const int64_t rows = 2, n = 2048 + 64, k = 3;  // not a multiple of the norm kernels' blocks
    const std::vector<float> x = random_floats(rng, static_cast<size_t>(rows * n));
    const std::vector<float> w = random_floats(rng, static_cast<size_t>(n));
    const std::vector<float> y = random_floats(rng, static_cast<size_t>(rows * n));
    const std::vector<float> experts = random_floats(rng, static_cast<size_t>(rows * k * n));
    const std::vector<float> weights = random_floats(rng, static_cast<size_t>(rows * k));
    gpu::DeviceBuffer buffer = pool().allocate(gpu::gpu_q8_bytes(rows, n));
    const gpu::GpuQ8Rows q8 = gpu::gpu_q8_view(buffer.data(), rows, n);
    for (const char* op : {"rms_norm", "add_rms_norm", "moe_combine_rms_norm"}) {
        float* dx = to_device(x);
        float* out = device_zeros<float>(x.size());
        if (std::string(op) == "rms_norm") gpu::gpu_rms_norm(dx, to_device(w), rows, n, 1e-6f, out, ctx(), &q8);
        else if (std::string(op) == "add_rms_norm") gpu::gpu_add_rms_norm(dx, to_device(y), to_device(w), rows, n, 1e-6f, out, ctx(), &q8);
        else gpu::gpu_moe_combine_rms_norm(to_device(experts), to_device(weights), rows, k, n, dx, to_device(w), 1e-6f, out, ctx(), &q8);
        const HostQ8 want = host_quantize(from_device(out, x.size()));
        const std::vector<int8_t> q = from_device(q8.q, want.q.size());
        int64_t differ = 0;
        for (size_t i = 0; i < q.size(); ++i) differ += q[i] != want.q[i];
        EXPECT_EQ(differ, 0) << op;
        EXPECT_NMSE(fmt::format("{} quantized output: scales and sums", op), from_device(q8.ds, want.ds.size()), want.ds, 1e-14);
    }
}

#else

STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuQ8)

#endif

}  // namespace
}  // namespace strata::test
