#include "backend/cpu/matmul.h"

#include <algorithm>
#include <cstring>

#include "quant/cpu/dot_kernels.h"
#include "quant/traits.h"

namespace strata {

void cpu_matmul(const Weight& w, int64_t matrix_index, const float* x, int64_t n_tokens, float* y, CpuContext& ctx) {
    STRATA_CHECK(w.data != nullptr, "matmul with an absent weight");
    STRATA_CHECK(matrix_index >= 0 && matrix_index < w.ne[2] * w.ne[3], "matmul matrix index out of range");
    const int64_t n_in = w.ne[0], n_out = w.ne[1];
    const QuantTraits& q = quant_traits(w.type);
    const TensorType act_type = q.dot_type;
    const DotFn dot = cpu_dot_kernel(w.type);
    STRATA_CHECK(dot != nullptr, "matmul on a type without a dot product");

    // Activations in the dot type: F32 weights use x as it is.
    const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
    uint64_t act_row_bytes = static_cast<uint64_t>(n_in) * sizeof(float);
    if (act_type != TensorType::F32) {
        act_row_bytes = tensor_type_info(act_type)->row_bytes(static_cast<uint64_t>(n_in));
        uint8_t* buf = ctx.scratch(CpuContext::kMatmulActivationSlot, act_row_bytes * static_cast<uint64_t>(n_tokens));
        const QuantizeRowFn quantize = quant_traits(act_type).quantize_row;
        ctx.pool().parallel_for(n_tokens, [&](int64_t t0, int64_t t1, int) {
            for (int64_t t = t0; t < t1; ++t) quantize(x + t * n_in, buf + static_cast<uint64_t>(t) * act_row_bytes, n_in);
        });
        act = buf;
    }

    const uint8_t* base = w.matrix(matrix_index);
    // Rows in blocks so a block of weight rows stays in cache while it meets every token.
    constexpr int64_t kRowBlock = 16;
    const int64_t n_blocks = (n_out + kRowBlock - 1) / kRowBlock;
    ctx.pool().parallel_for(n_blocks, [&](int64_t b0, int64_t b1, int) {
        for (int64_t b = b0; b < b1; ++b) {
            const int64_t o0 = b * kRowBlock, o1 = std::min(n_out, o0 + kRowBlock);
            for (int64_t t = 0; t < n_tokens; ++t) {
                const uint8_t* a = act + static_cast<uint64_t>(t) * act_row_bytes;
                float* yt = y + t * n_out;
                for (int64_t o = o0; o < o1; ++o) yt[o] = dot(base + static_cast<uint64_t>(o) * w.row_bytes, a, n_in);
            }
        }
    });
}

void cpu_get_rows(const Weight& w, const int32_t* ids, int64_t n, float* out) {
    const DequantizeRowFn dequantize = quant_traits(w.type).dequantize_row;
    for (int64_t t = 0; t < n; ++t) {
        STRATA_CHECK(ids[t] >= 0 && ids[t] < w.ne[1], "token id outside the embedding table");
        dequantize(w.row(ids[t]), out + t * w.ne[0], w.ne[0]);
    }
}

}  // namespace strata
