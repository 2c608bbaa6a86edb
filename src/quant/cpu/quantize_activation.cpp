#include "quant/cpu/quantize_activation.h"

#include <algorithm>

namespace strata {

QuantizeRowFn cpu_quantize_activation(TensorType dot_type, SimdLevel max_level) {
    const SimdLevel level = std::min(max_level, cpu_simd_level());
    if (dot_type == TensorType::Q8_K && level >= SimdLevel::Avx2) return quantize_row_q8_k_avx2;
    const QuantTraits* q = find_quant_traits(dot_type);
    return q ? q->quantize_row : nullptr;
}

}  // namespace strata
