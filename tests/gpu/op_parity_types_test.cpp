// GPU dequantization of every weight format against the CPU's scalar reference dequantizer
// (quant_traits(type).dequantize_row) and against ggml's own dequantized values
// (testdata/quant/<TYPE>.gguf, see testdata/PROVENANCE.md). gpu_get_rows reads rows through
// dequant_chunk<T> (backend/gpu/kernels/dequant.cuh), the function every GPU matmul kernel reads
// its weights with, so a format that passes here is decoded right by all of them; op_parity_test.cpp
// runs the kernels themselves on every format. Also: formats without an int8 kernel take the float
// kernels when the decoder hands int8 activations along. The GPU cases skip without a GPU.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "core/fp16.h"
#include "gguf/reader.h"
#include "gpu/op_parity.h"
#include "support/testdata.h"

namespace strata::test {
namespace {

// Every format the CPU reads weights of (a registered dot product; Q8_1 and Q8_K are activation
// formats only) is in gpu_weight_types(), so the op-parity suite and gpu_supports_type cover it.
TEST(GpuWeightTypes, ListEveryCpuWeightFormat) {
    const std::vector<TensorType> listed = gpu_weight_types();
    size_t count = 0;
    const TensorTypeInfo* types = all_tensor_types(&count);
    for (size_t i = 0; i < count; ++i) {
        const QuantTraits* traits = find_quant_traits(types[i].type);
        if (!traits || !traits->dot) continue;
        EXPECT_NE(std::find(listed.begin(), listed.end(), types[i].type), listed.end())
            << types[i].name << " has a CPU dot product but is missing from gpu_weight_types()";
    }
}

#if STRATA_HAS_GPU

TEST(GpuWeightTypes, GpuReadsEveryListedFormat) {
    for (TensorType type : gpu_weight_types()) EXPECT_TRUE(gpu::gpu_supports_type(type)) << tensor_type_name(type);
}

// Formats whose GPU dequantization is a product of exactly converted factors, or a conversion,
// with no a·b + c a compiler may fuse into one rounding: the GPU must reproduce the CPU's bits.
// The others (Q4_0's q·d + m, the K-quants' dl·q − ml) agree to float rounding.
bool bit_exact_on_gpu(TensorType t) {
    using T = TensorType;
    switch (t) {
        case T::F32: case T::F16: case T::BF16: case T::Q8_0:
        case T::IQ1_S: case T::IQ1_M: case T::IQ2_XXS: case T::IQ2_XS: case T::IQ2_S: case T::IQ3_XXS:
        case T::IQ3_S: case T::IQ4_NL: case T::IQ4_XS: case T::TQ1_0: case T::TQ2_0: case T::MXFP4:
        case T::NVFP4: case T::Q1_0: case T::Q2_0:
            return true;
        default:
            return false;
    }
}

// `got` equals `want` bit for bit where the format allows it, and within NMSE 1e-12 always.
void expect_same_values(const std::string& name, TensorType type, const std::vector<float>& got,
                        const std::vector<float>& want) {
    EXPECT_NMSE(name, got, want, 1e-12);
    if (!bit_exact_on_gpu(type) || got.size() != want.size()) return;
    size_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::bit_cast<uint32_t>(got[i]) == std::bit_cast<uint32_t>(want[i])) continue;
        if (mismatches++ < 5) ADD_FAILURE() << name << ": value " << i << " got " << got[i] << ", want " << want[i];
    }
    EXPECT_EQ(mismatches, 0u) << name << ": values that differ in their bits";
}

class GpuDequant : public GpuOpTest {
protected:
    // Every row of `w`, dequantized on the GPU through gpu_get_rows.
    std::vector<float> gpu_rows(const HostWeight& w) {
        const int64_t rows = w.view.rows();
        std::vector<int32_t> ids(static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r) ids[static_cast<size_t>(r)] = static_cast<int32_t>(r);
        const size_t n = static_cast<size_t>(rows * w.view.ne[0]);
        float* out = device_zeros<float>(n);
        gpu::gpu_get_rows(to_device(w), to_device(ids), rows, out, ctx());
        return from_device(out, n);
    }
};

// Every row of `w`, dequantized by the CPU's scalar reference.
std::vector<float> cpu_rows(const HostWeight& w) {
    const int64_t n_in = w.view.ne[0], rows = w.view.rows();
    std::vector<float> out(static_cast<size_t>(rows * n_in));
    for (int64_t r = 0; r < rows; ++r) quant_traits(w.view.type).dequantize_row(w.view.row(r), out.data() + r * n_in, n_in);
    return out;
}

// A [n_in, rows] weight over a copy of `bytes` (a tensor of a test-data file).
HostWeight weight_of(TensorType type, int64_t n_in, int64_t rows, const uint8_t* bytes) {
    HostWeight w;
    w.view.type = type;
    w.view.ne[0] = n_in, w.view.ne[1] = rows;
    w.view.row_bytes = tensor_type_info(type)->row_bytes(static_cast<uint64_t>(n_in));
    w.bytes.assign(bytes, bytes + w.view.row_bytes * static_cast<uint64_t>(rows));
    w.view.data = w.bytes.data();
    return w;
}

// Random valid blocks (every scale code, grid index and sign pattern a block can hold), and, where
// the format has a reference quantizer, blocks quantized from normal floats. 64 rows of 1024
// values: 256 super-blocks, 2048 blocks of 32.
TEST_F(GpuDequant, RandomBlocksMatchCpuReference) {
    std::mt19937 rng(11);
    const int64_t n_in = 1024, rows = 64;
    for (TensorType type : gpu_weight_types()) {
        const HostWeight random = make_random_block_weight(type, n_in, rows, 1, rng);
        expect_same_values(fmt::format("dequant {} random blocks [{}, {}]", tensor_type_name(type), n_in, rows), type,
                           gpu_rows(random), cpu_rows(random));
        if (!quant_traits(type).quantize_row) continue;
        const HostWeight quantized = make_random_weight(type, n_in, rows, 1, rng);
        expect_same_values(fmt::format("dequant {} quantized [{}, {}]", tensor_type_name(type), n_in, rows), type,
                           gpu_rows(quantized), cpu_rows(quantized));
    }
}

// ggml's blocks (quantized with and without an importance matrix) and ggml's dequantized values.
// Every type the test data holds must be one the GPU reads.
TEST_F(GpuDequant, GgmlBlocksMatchGgmlValues) {
    const std::vector<std::string> files = quant_vector_files();
    if (files.empty()) GTEST_SKIP() << "test data missing: " << testdata_path("quant") << " (set STRATA_TESTDATA)";
    for (const std::string& path : files) {
        auto opened = GgufFile::open(path);
        ASSERT_TRUE(opened) << opened.status().message();
        const GgufFile& file = *opened;
        const std::string type_name = file.get_string("testdata.type", "");
        const auto type = tensor_type_from_name(type_name);
        ASSERT_TRUE(type.has_value()) << path << ": testdata.type '" << type_name << "'";
        if (!gpu::gpu_supports_type(*type)) {
            ADD_FAILURE() << type_name << ": ggml writes this type, no GPU kernel reads it";
            continue;
        }
        const GgufTensorInfo* quantized = file.tensor("quantized");
        const GgufTensorInfo* dequantized = file.tensor("dequantized");
        ASSERT_TRUE(quantized && dequantized) << path << ": tensors 'quantized' and 'dequantized' expected";
        ASSERT_EQ(quantized->type, *type) << path;
        ASSERT_EQ(dequantized->type, TensorType::F32) << path;
        const auto n_in = static_cast<int64_t>(quantized->ne[0]), rows = static_cast<int64_t>(quantized->rows());

        const HostWeight w = weight_of(*type, n_in, rows, file.tensor_data(*quantized));
        const std::vector<float> got = gpu_rows(w);
        const auto* ggml = reinterpret_cast<const float*>(file.tensor_data(*dequantized));
        expect_same_values(fmt::format("dequant {} ggml blocks vs ggml values", type_name), *type, got,
                           std::vector<float>(ggml, ggml + rows * n_in));
        expect_same_values(fmt::format("dequant {} ggml blocks vs cpu reference", type_name), *type, got, cpu_rows(w));

        // Absent for the formats ggml quantizes only with an importance matrix.
        if (const GgufTensorInfo* plain = file.tensor("quantized_noimatrix")) {
            ASSERT_EQ(plain->type, *type) << path;
            const HostWeight p = weight_of(*type, n_in, rows, file.tensor_data(*plain));
            expect_same_values(fmt::format("dequant {} ggml blocks (no imatrix) vs cpu reference", type_name), *type,
                               gpu_rows(p), cpu_rows(p));
        }
    }
}

// The decoder passes int8 activations (gpu_quantize_q8) with every product; formats the int8
// kernel does not read (the i-quants but IQ4_NL, and the ternary formats) must take the float
// kernels and read x itself. Dense decode rows, and MoE expert products through a one-token plan,
// a sorted-tile plan and a wide-tile (prompt) plan, the path of MoE models stored as IQ2_XXS or
// IQ4_XS. Against the exact product of f32 activations: had the int8 activations been
// used, the error would be ~1e-5, not float summation order.
TEST_F(GpuDequant, FloatKernelsTakeFormatsWithoutInt8Kernel) {
    std::mt19937 rng(12);
    const int64_t n_exp = 6, k = 3, n_in = 512, n_out = 72;
    for (TensorType type : gpu_weight_types()) {
        const HostWeight w = make_weight(type, n_in, n_out, n_exp, rng);
        const gpu::DeviceWeight dw = to_device(w);
        if (gpu::gpu_matvec_takes_q8(dw)) continue;  // op_parity_q8_test.cpp
        const std::string label = fmt::format("{} [{}, {}]x{}", tensor_type_name(type), n_in, n_out, n_exp);
        for (int64_t n : {1, 5}) {
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * n_in));
            float* xd = to_device(x);
            const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(xd, n, n_in, 0, ctx());
            float* y = device_zeros<float>(static_cast<size_t>(n * n_out));
            gpu::gpu_matmul(dw, 2, xd, n, y, ctx(), &xq);
            EXPECT_NMSE(fmt::format("matmul with int8 x {} matrix 2 n={}", label, n), from_device(y, static_cast<size_t>(n * n_out)),
                        exact_products(w, x, n, [](int64_t) { return int64_t{2}; }, [](int64_t c) { return c; }, false), 1e-10);
        }
        for (int64_t n : {1, 5, 24}) {
            const int64_t pairs = n * k;
            std::vector<int32_t> ids(static_cast<size_t>(pairs));
            for (int64_t p = 0; p < pairs; ++p) ids[static_cast<size_t>(p)] = static_cast<int32_t>((p * 5 + p / k) % n_exp);
            const bool wide = n == 24;
            gpu::MoePlan plan = gpu::gpu_moe_plan(to_device(ids), pairs, n_exp, 4, ctx(),
                                                  wide ? gpu::kGpuTiledColumns : gpu::kGpuMatmulColumns);
            if (n == 1) plan.max_tile_pairs = 1;  // one token: tiles of one pair (the one-column kernel)
            const std::vector<float> x = random_floats(rng, static_cast<size_t>(n * n_in));
            float* xd = to_device(x);
            const gpu::GpuQ8Rows xq = gpu::gpu_quantize_q8(xd, n, n_in, 0, ctx());
            float* y = device_zeros<float>(static_cast<size_t>(pairs * n_out));
            gpu::gpu_matmul_experts(dw, plan, xd, k, y, ctx(), &xq);
            const bool f16 = wide && gpu::gpu_tiled_matmul_f16(dw, ctx());
            const auto expert = [&](int64_t p) { return static_cast<int64_t>(ids[static_cast<size_t>(p)]); };
            const auto token = [&](int64_t p) { return p / k; };
            EXPECT_NMSE(fmt::format("experts with int8 x {} top {} n={}{}", label, k, n, f16 ? " (f16 tensor cores)" : ""),
                        from_device(y, static_cast<size_t>(pairs * n_out)), exact_products(w, x, pairs, expert, token, f16),
                        1e-10);
        }
    }
}

#else

STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(GpuDequant)

#endif

}  // namespace
}  // namespace strata::test
