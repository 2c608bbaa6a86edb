#include "quant/cpu/dot_kernels.h"

#include <algorithm>

namespace strata {

namespace {
DotFn find_in(const DotKernel* table, size_t count, TensorType type) {
    for (size_t i = 0; i < count; ++i) {
        if (table[i].type == type && table[i].dot) return table[i].dot;
    }
    return nullptr;
}
}  // namespace

DotFn cpu_dot_kernel_exact(TensorType type, SimdLevel level) {
    size_t n = 0;
    switch (level) {
        case SimdLevel::Avx512: {
            const DotKernel* t = avx512_dot_kernels(&n);
            return find_in(t, n, type);
        }
        case SimdLevel::Avx2: {
            const DotKernel* t = avx2_dot_kernels(&n);
            return find_in(t, n, type);
        }
        case SimdLevel::Scalar: {
            const QuantTraits* q = find_quant_traits(type);
            return q ? q->dot : nullptr;
        }
    }
    return nullptr;
}

DotFn cpu_dot_kernel(TensorType type, SimdLevel max_level) {
    SimdLevel level = std::min(max_level, cpu_simd_level());
    for (int l = static_cast<int>(level); l >= 0; --l) {
        if (DotFn f = cpu_dot_kernel_exact(type, static_cast<SimdLevel>(l))) return f;
    }
    return nullptr;
}

}  // namespace strata
