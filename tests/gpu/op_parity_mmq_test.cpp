// The prompt-batch matmul on int8 tensor cores (ops_matmul_mmq.cu): every format it unpacks, dense
// tiles (full, partial in rows and columns, a stacked matrix, rows that end in a partial stage)
// and experts through a plan of wide tiles (a full and a partial tile for one expert, activations
// read per token and per pair). Each product is compared with the exact product of the
// dequantized weights and the dequantized int8 activations (NMSE ≤ 1e-10: only the summation
// order differs) and with the CPU op. Skips without a GPU, and on GPUs without int8 tensor cores.
#include "gpu/op_parity.h"

#include <fmt/format.h>

#include "backend/cpu/matmul.h"
#include "core/thread_pool.h"

namespace strata::test {
namespace {

#if STRATA_HAS_GPU

class GpuMmq : public GpuOpTest {
protected:
    void SetUp() override {
        GpuOpTest::SetUp();
        if (IsSkipped()) return;
        if (!gpu::gpu_prompt_takes_q8(ctx())) GTEST_SKIP() << "this device or build has no int8 tensor-core path (CUDA sm_80+)";
    }
};

// 130 rows (a partial row tile), 70 tokens (a full and a partial column tile), 33 tokens of
// matrix 2 of three, 160-value rows (a stage of 128 and a partial one: 32-value formats only):
// grids small enough for 64-row tiles. 2100 rows × 256 tokens: enough blocks for 128-row ones
// (on a GPU of up to 136 multiprocessors; STRATA_GPU_MMQ_ROWS forces either). Shapes whose rows a
// format's blocks do not divide are left out for it.
TEST_F(GpuMmq, DenseTilesEveryFormat) {
    struct Shape { int64_t n_in, n_out, n_tokens, n_matrices, matrix; };
    const Shape shapes[] = {{256, 130, 32, 1, 0}, {768, 64, 70, 1, 0}, {512, 40, 33, 3, 2}, {160, 24, 40, 1, 0},
                            {256, 2100, 256, 1, 0}};
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext cpu(pool);
    std::mt19937 rng(31);
    for (TensorType type : mmq_types()) {
        for (const Shape& s : shapes) {
            if (!tensor_type_info(type)->row_fits(static_cast<uint64_t>(s.n_in))) continue;
            const bool tall = s.n_out > 1000;  // slow to check by the exact product: three kinds of unpacking
            if (tall && type != TensorType::Q4_K && type != TensorType::Q6_K && type != TensorType::Q4_0) continue;
            HostWeight w = make_weight(type, s.n_in, s.n_out, s.n_matrices, rng);
            const gpu::DeviceWeight dw = to_device(w);
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(s.n_tokens * s.n_in));
            const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(x), s.n_tokens, s.n_in, 0, ctx());
            float* y = device_zeros<float>(static_cast<size_t>(s.n_tokens * s.n_out));
            gpu::gpu_matmul(dw, s.matrix, to_device(x), s.n_tokens, y, ctx(), &xq);
            const std::vector<float> got = from_device(y, static_cast<size_t>(s.n_tokens * s.n_out));
            const std::string name = fmt::format("mmq {} [{}, {}]x{} n={}", tensor_type_name(type), s.n_in, s.n_out,
                                                 s.n_matrices, s.n_tokens);
            const auto same_matrix = [&](int64_t) { return s.matrix; };
            const auto own_row = [](int64_t c) { return c; };
            EXPECT_NMSE(name + " vs exact", got, exact_products(w, host_quantize(x).values(), s.n_tokens, same_matrix, own_row),
                        1e-10);
            std::vector<float> want(got.size());
            cpu_matmul(w.view, s.matrix, x.data(), s.n_tokens, want.data(), cpu);
            EXPECT_NMSE(name + " vs cpu", got, want, 5e-4);
        }
    }
}

// 70 tokens, top 2 of 3 experts: expert 0 takes every token (a tile of 64 and one of 6), experts
// 1 and 2 half each; x read per token (gate/up) and per pair (down).
TEST_F(GpuMmq, ExpertsThroughWideTiles) {
    std::mt19937 rng(32);
    const int64_t n_exp = 3, k = 2, n = 70, pairs = n * k, n_in = 512, n_out = 136;
    std::vector<int32_t> ids(static_cast<size_t>(pairs));
    for (int64_t t = 0; t < n; ++t) ids[static_cast<size_t>(2 * t)] = 0, ids[static_cast<size_t>(2 * t + 1)] = 1 + t % 2;
    for (TensorType type : {TensorType::Q4_K, TensorType::Q6_K, TensorType::Q8_0, TensorType::Q4_0, TensorType::MXFP4,
                            TensorType::Q2_0, TensorType::Q1_0}) {
        HostWeight w = make_weight(type, n_in, n_out, n_exp, rng);
        const gpu::DeviceWeight dw = to_device(w);
        const gpu::MoePlan plan = gpu::gpu_moe_plan(to_device(ids), pairs, n_exp, 4, ctx(), gpu::kGpuTiledColumns);
        ASSERT_EQ(plan.tile_columns, gpu::kGpuTiledColumns);
        for (int64_t per_row : {k, int64_t{1}}) {
            const int64_t x_rows = pairs / per_row;
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(x_rows * n_in));
            const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(to_device(x), x_rows, n_in, 0, ctx());
            float* y = device_zeros<float>(static_cast<size_t>(pairs * n_out));
            gpu::gpu_matmul_experts(dw, plan, to_device(x), per_row, y, ctx(), &xq);
            const std::vector<float> got = from_device(y, static_cast<size_t>(pairs * n_out));
            const auto expert = [&](int64_t p) { return static_cast<int64_t>(ids[static_cast<size_t>(p)]); };
            const auto x_row = [&](int64_t p) { return p / per_row; };
            EXPECT_NMSE(fmt::format("mmq experts {} [{}, {}]x{} top {} n={} x per {}", tensor_type_name(type), n_in, n_out,
                                    n_exp, k, n, per_row == 1 ? "pair" : "token"),
                        got, exact_products(w, host_quantize(x).values(), pairs, expert, x_row), 1e-10);
        }
    }
}

#else

STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuMmq)

#endif

}  // namespace
}  // namespace strata::test
