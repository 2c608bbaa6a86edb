#pragma once
// Reading and writing KV cache elements of either cache type (KvCacheType::F32 as float, F16 as the
// half's bits), so one kernel template serves both.
#include <cstdint>

#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

__device__ __forceinline__ float load_kv(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load_kv(const uint16_t* p, int64_t i) { return vendor::half_bits_to_float(p[i]); }
__device__ __forceinline__ void store_kv(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store_kv(uint16_t* p, int64_t i, float v) { p[i] = vendor::float_to_half_bits(v); }

}  // namespace strata::gpu
