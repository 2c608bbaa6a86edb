#pragma once
// Shared pieces of the GPU op-parity suite (tests/gpu/*_test.cpp), in the manner of ggml's
// test-backend-ops: every GPU op runs on random inputs and is compared with the CPU reference op
// by normalized mean squared error, Σ(gpu − cpu)² / Σ cpu², against a per-op threshold.
//
// How to add a case: build the inputs with random_floats()/make_weight(), run the CPU op, copy
// the inputs with to_device(), run the GPU op on the fixture's ctx(), read the result back with
// from_device(), and finish with EXPECT_NMSE(op_name, gpu, cpu, threshold). Pick the threshold
// from what differs legitimately: float summation order (~1e-12), the CPU's quantized activations
// in matmul (~1e-5), f16 KV rounding (only if the reference does not round the same way).
// Every case prints its NMSE, so a device run's log is the parity table.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backend/gpu/device_runtime.h"
#include "model/gpu/gpu_model.h"
#include "core/fp16.h"
#include "core/nmse.h"
#include "model/random_weights.h"
#include "model/weights.h"
#include "quant/traits.h"

namespace strata::test {

inline double nmse(const std::vector<float>& got, const std::vector<float>& want) { return normalized_mse(got, want); }

#define EXPECT_NMSE(name, got, want, limit)                                                              \
    do {                                                                                                 \
        ASSERT_EQ((got).size(), (want).size()) << (name);                                                \
        const double nmse_value_ = ::strata::test::nmse((got), (want));                                  \
        std::printf("op-parity  %-48s nmse %.3e  (limit %.0e)  %s\n", std::string(name).c_str(), nmse_value_, \
                    static_cast<double>(limit), nmse_value_ <= (limit) ? "ok" : "FAIL");                 \
        EXPECT_LE(nmse_value_, (limit)) << (name);                                                       \
        EXPECT_FALSE(std::isnan(nmse_value_)) << (name);                                                 \
    } while (0)

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float scale = 1.0f) {
    return random_normal_floats(rng, n, scale);
}

// A weight tensor quantized from random values, with a Weight view of its bytes.
using HostWeight = RandomWeight;
inline HostWeight make_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng) {
    return make_random_weight(type, n_in, n_out, n_matrices, rng);
}

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
inline HostQ8 host_quantize(const std::vector<float>& x) {
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

// The weight formats the GPU kernels read: every format the CPU has a dot product for
// (op_parity_types_test.cpp checks that). make_weight quantizes random floats where the format
// has a reference quantizer and draws random valid blocks where it has none (the i-quants). The
// 256-value super-block formats need rows of a multiple of 256 values, as every shape here has.
inline std::vector<TensorType> gpu_weight_types() {
    using T = TensorType;
    return {T::F32,    T::F16,     T::BF16,   T::Q4_0,  T::Q4_1,   T::Q5_0,   T::Q5_1,  T::Q8_0,
            T::Q2_K,   T::Q3_K,    T::Q4_K,   T::Q5_K,  T::Q6_K,   T::IQ1_S,  T::IQ1_M, T::IQ2_XXS,
            T::IQ2_XS, T::IQ2_S,   T::IQ3_XXS, T::IQ3_S, T::IQ4_NL, T::IQ4_XS, T::TQ1_0, T::TQ2_0,
            T::MXFP4,  T::NVFP4,   T::Q1_0,   T::Q2_0};
}

// y[c] = W_{matrix_of(c)} · x[x_row_of(c)], weights dequantized by the scalar reference, products
// summed in double: the int8 kernels' reference when x holds the dequantized int8 activations
// (HostQ8::values()); with `f16` both operands first rounded to f16, as the f16 tensor-core tiles
// stage them.
template <typename MatrixOf, typename XRowOf>
std::vector<float> exact_products(const HostWeight& w, const std::vector<float>& x, int64_t n_cols, MatrixOf matrix_of,
                                  XRowOf x_row_of, bool f16 = false) {
    const int64_t n_in = w.view.ne[0], n_out = w.view.ne[1];
    const auto round = [f16](float v) { return f16 ? fp16_to_fp32(fp32_to_fp16(v)) : v; };
    std::vector<float> row(static_cast<size_t>(n_in)), y(static_cast<size_t>(n_cols * n_out));
    for (int64_t c = 0; c < n_cols; ++c) {
        const float* xr = x.data() + x_row_of(c) * n_in;
        for (int64_t o = 0; o < n_out; ++o) {
            quant_traits(w.view.type).dequantize_row(w.view.matrix(matrix_of(c)) + static_cast<uint64_t>(o) * w.view.row_bytes,
                                                     row.data(), n_in);
            double s = 0.0;
            for (int64_t i = 0; i < n_in; ++i) s += static_cast<double>(round(row[static_cast<size_t>(i)])) * round(xr[i]);
            y[static_cast<size_t>(c * n_out + o)] = static_cast<float>(s);
        }
    }
    return y;
}

// The formats the int8 matrix-vector kernels read (q8_dot.cuh)...
inline std::vector<TensorType> q8_types() {
    using T = TensorType;
    return {T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0,  T::Q4_K, T::Q5_K,
            T::Q6_K, T::IQ4_NL, T::MXFP4, T::NVFP4, T::Q1_0, T::Q2_0};
}
// ...and those of them the int8 tensor-core tiles read too (mmq_unpack.cuh; NVFP4's prompts take
// the float kernels).
inline std::vector<TensorType> mmq_types() {
    std::vector<TensorType> out;
    for (TensorType t : q8_types()) {
        if (t != TensorType::NVFP4) out.push_back(t);
    }
    return out;
}

}  // namespace strata::test

// The one test of a GPU suite in a build without GPU support: it checks that the build says so,
// then skips. Use inside `#if !STRATA_HAS_GPU`.
#define STRATA_GPU_SUITE_SKIPS_WITHOUT_GPU_SUPPORT(suite)                                        \
    TEST(suite, SkippedWithoutGpuSupport) {                                                     \
        const std::string why = gpu_unavailable_reason();                                       \
        EXPECT_NE(why.find("no GPU support in this build"), std::string::npos) << why;          \
        GTEST_SKIP() << why;                                                                    \
    }

#if STRATA_HAS_GPU
#include "backend/gpu/gpu_ops.h"

namespace strata::test {

// Skips every test of the suite, with the reason, when no GPU can run here.
class GpuOpTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::vector<gpu::DeviceInfo> devices;
        std::string why;
        if (!gpu::find_devices(&devices, &why)) GTEST_SKIP() << "no GPU: " << why;
        pool_ = std::make_unique<gpu::DevicePool>(devices[0].ordinal);
        ctx_ = std::make_unique<gpu::GpuContext>(devices[0].ordinal, *pool_);
    }
    void TearDown() override {
        keep_.clear();
        ctx_.reset();
        pool_.reset();
    }
    gpu::GpuContext& ctx() { return *ctx_; }
    gpu::DevicePool& pool() { return *pool_; }

    // Device copy of host data, alive until the test ends.
    template <typename T> T* to_device(const std::vector<T>& host) {
        gpu::DeviceBuffer b = pool_->allocate(std::max<size_t>(1, host.size()) * sizeof(T));
        ctx_->upload(b.data(), host.data(), host.size() * sizeof(T));
        T* p = b.as<T>();
        keep_.push_back(std::move(b));
        ctx_->synchronize();
        return p;
    }
    template <typename T> T* device_zeros(size_t n) { return to_device(std::vector<T>(n)); }
    template <typename T> std::vector<T> from_device(const T* p, size_t n) {
        std::vector<T> host(n);
        ctx_->download(host.data(), p, n * sizeof(T));
        ctx_->synchronize();
        return host;
    }
    gpu::DeviceWeight to_device(const HostWeight& w) {
        gpu::DeviceWeight d;
        d.data = to_device(w.bytes);
        d.type = w.view.type;
        for (int i = 0; i < 4; ++i) d.ne[i] = w.view.ne[i];
        d.row_bytes = w.view.row_bytes;
        return d;
    }

private:
    std::unique_ptr<gpu::DevicePool> pool_;
    std::unique_ptr<gpu::GpuContext> ctx_;
    std::vector<gpu::DeviceBuffer> keep_;
};

}  // namespace strata::test
#endif
