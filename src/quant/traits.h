#pragma once
// The one table of quant-format behaviour. Every format registers here, once: its scalar
// reference dequantizer, its reference quantizer where we have one, the activation type its dot
// product takes, and the scalar reference dot product. Layout facts (block size and bytes) come
// from gguf/tensor_type.h. Optimised CPU kernels (quant/cpu/) are checked against these.
//
//   const QuantTraits& q = quant_traits(TensorType::Q4_K);
//   std::vector<uint8_t> act(tensor_type_info(q.dot_type)->row_bytes(n));
//   quant_traits(q.dot_type).quantize_row(x, act.data(), n);   // activation → Q8_K
//   float y = q.dot(weight_row, act.data(), n);

#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.h"

namespace strata {

using DequantizeRowFn = void (*)(const void* src, float* dst, int64_t n);
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n);
// Dot product of one row of the weight type with one row of its dot type, n values each.
using DotFn = float (*)(const void* weights, const void* activation, int64_t n);

struct QuantTraits {
    TensorType type;
    TensorType dot_type;              // the type the activation is converted to for `dot`
    DequantizeRowFn dequantize_row;   // never null for a registered type
    QuantizeRowFn quantize_row;       // reference quantizer (no importance matrix); null if none
    DotFn dot;                        // scalar reference; null for activation-only types (Q8_K)
};

// nullptr when the type has no registered behaviour (e.g. I8..I64, F64).
const QuantTraits* find_quant_traits(TensorType t);
// Aborts for an unregistered type: callers check support at load time with find_quant_traits.
const QuantTraits& quant_traits(TensorType t);
// Every registered type, in the table's order (for listings such as quantize's targets).
const QuantTraits* all_quant_traits(size_t* count);

}  // namespace strata
