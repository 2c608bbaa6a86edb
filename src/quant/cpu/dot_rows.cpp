#include "quant/cpu/dot_rows.h"

#include <algorithm>

#include "quant/cpu/dot_kernels.h"

namespace strata {

namespace {

const DotRowsKernel* find_exact(TensorType type, SimdLevel level) {
    size_t n = 0;
    const DotRowsKernel* table = nullptr;
    switch (level) {
        case SimdLevel::Avx512: table = avx512_dot_rows_kernels(&n); break;
        case SimdLevel::Avx2: table = avx2_dot_rows_kernels(&n); break;
        case SimdLevel::Scalar: return nullptr;
    }
    for (size_t i = 0; i < n; ++i) {
        if (table[i].type == type) return &table[i];
    }
    return nullptr;
}

// Walks down the levels exactly as cpu_dot_kernel does and stops at the same one: a multi-row
// kernel of another level would round differently from the single-row kernel in use.
const DotRowsKernel* find_paired(TensorType type, SimdLevel max_level) {
    const SimdLevel level = std::min(max_level, cpu_simd_level());
    for (int l = static_cast<int>(level); l >= 0; --l) {
        if (cpu_dot_kernel_exact(type, static_cast<SimdLevel>(l))) return find_exact(type, static_cast<SimdLevel>(l));
    }
    return nullptr;
}

}  // namespace

DotRowsFn cpu_dot_rows_kernel_exact(TensorType type, SimdLevel level) {
    const DotRowsKernel* k = find_exact(type, level);
    return k ? k->rows : nullptr;
}

DotRowsFn cpu_dot_rows_kernel(TensorType type, SimdLevel max_level) {
    const DotRowsKernel* k = find_paired(type, max_level);
    return k ? k->rows : nullptr;
}

DotTileFn cpu_dot_tile_kernel_exact(TensorType type, SimdLevel level) {
    const DotRowsKernel* k = find_exact(type, level);
    return k ? k->tile : nullptr;
}

DotTileFn cpu_dot_tile_kernel(TensorType type, SimdLevel max_level) {
    const DotRowsKernel* k = find_paired(type, max_level);
    return k ? k->tile : nullptr;
}

}  // namespace strata
