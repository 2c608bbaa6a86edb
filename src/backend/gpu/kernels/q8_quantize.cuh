#pragma once
// Quantizing activations to GpuQ8Rows (gpu_ops.h) inside the kernel that produces them: value i of
// a row, held by a thread whose 32-lane group holds the values of i's whole 32-value block (lanes
// 32b .. 32b + 31 of a block of threads walking the row with a stride that is a multiple of 32).
// Every lane of the group calls it, `in` false for lanes past the row's end (which must then be a
// whole group); the reductions use lane masks below 32, so on a 64-wide wavefront each half works
// alone. Rule: d = max|x| / 127, q = round(x / d), and (d, d·Σq) per block.
#include <cstdint>

#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

__device__ __forceinline__ void quantize_q8_value(float v, bool in, int8_t* q_row, float2* ds_row, int64_t i) {
    float amax = fabsf(v);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, vendor::shfl_xor(amax, off));
    const float d = amax / 127.0f;
    const int qv = d > 0.0f ? static_cast<int>(roundf(v / d)) : 0;
    int sum = qv;
#pragma unroll
    for (int off = 16; off > 0; off /= 2) sum += vendor::shfl_xor(sum, off);
    if (!in) return;
    q_row[i] = static_cast<int8_t>(qv);
    if (i % 32 == 0) ds_row[i / 32] = make_float2(d, d * static_cast<float>(sum));
}

}  // namespace strata::gpu
