#include "quant/traits.h"

#include <array>
#include <string>

#include "core/check.h"
#include "quant/float_types.h"
#include "quant/iq1.h"
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq4.h"
#include "quant/k_quants.h"
#include "quant/legacy.h"
#include "quant/mxfp4.h"
#include "quant/nvfp4.h"
#include "quant/q1_0.h"
#include "quant/q2_0.h"
#include "quant/q8_k.h"
#include "quant/ternary.h"

namespace strata {

namespace {

using T = TensorType;

// One row per supported type. dot_type is the format the activation is converted to before the
// dot product (the same choice as ggml's CPU vec_dot_type, so weight rows meet the activation
// precision they were designed for). Activation-only formats (Q8_1, Q8_K) have no dot.
constexpr QuantTraits kTraits[] = {
    // type      dot_type  dequantize_row         quantize_row         dot
    {T::F32,     T::F32,   dequantize_row_f32,    quantize_row_f32,    dot_f32},
    {T::F16,     T::F16,   dequantize_row_f16,    quantize_row_f16,    dot_f16},
    {T::BF16,    T::BF16,  dequantize_row_bf16,   quantize_row_bf16,   dot_bf16},

    {T::Q4_0,    T::Q8_0,  dequantize_row_q4_0,   quantize_row_q4_0,   dot_q4_0_q8_0},
    {T::Q4_1,    T::Q8_1,  dequantize_row_q4_1,   quantize_row_q4_1,   dot_q4_1_q8_1},
    {T::Q5_0,    T::Q8_0,  dequantize_row_q5_0,   quantize_row_q5_0,   dot_q5_0_q8_0},
    {T::Q5_1,    T::Q8_1,  dequantize_row_q5_1,   quantize_row_q5_1,   dot_q5_1_q8_1},
    {T::Q8_0,    T::Q8_0,  dequantize_row_q8_0,   quantize_row_q8_0,   dot_q8_0_q8_0},
    {T::Q8_1,    T::Q8_1,  dequantize_row_q8_1,   quantize_row_q8_1,   nullptr},

    {T::Q2_K,    T::Q8_K,  dequantize_row_q2_k,   quantize_row_q2_k,   dot_q2_k_q8_k},
    {T::Q3_K,    T::Q8_K,  dequantize_row_q3_k,   quantize_row_q3_k,   dot_q3_k_q8_k},
    {T::Q4_K,    T::Q8_K,  dequantize_row_q4_k,   quantize_row_q4_k,   dot_q4_k_q8_k},
    {T::Q5_K,    T::Q8_K,  dequantize_row_q5_k,   quantize_row_q5_k,   dot_q5_k_q8_k},
    {T::Q6_K,    T::Q8_K,  dequantize_row_q6_k,   quantize_row_q6_k,   dot_q6_k_q8_k},
    {T::Q8_K,    T::Q8_K,  dequantize_row_q8_k,   quantize_row_q8_k,   nullptr},

    {T::MXFP4,   T::Q8_0,  dequantize_row_mxfp4,  quantize_row_mxfp4,  dot_mxfp4_q8_0},
    {T::NVFP4,   T::Q8_0,  dequantize_row_nvfp4,  quantize_row_nvfp4,  dot_nvfp4_q8_0},
    {T::Q1_0,    T::Q8_0,  dequantize_row_q1_0,   quantize_row_q1_0,   dot_q1_0_q8_0},
    {T::Q2_0,    T::Q8_0,  dequantize_row_q2_0,   quantize_row_q2_0,   dot_q2_0_q8_0},
    {T::TQ1_0,   T::Q8_K,  dequantize_row_tq1_0,  quantize_row_tq1_0,  dot_tq1_0_q8_k},
    {T::TQ2_0,   T::Q8_K,  dequantize_row_tq2_0,  quantize_row_tq2_0,  dot_tq2_0_q8_k},

    // IQ formats (quant/iq1.h .. iq4.h); no reference quantizers
    {T::IQ1_S,   T::Q8_K,  dequantize_row_iq1_s,   nullptr,             dot_iq1_s_q8_k},
    {T::IQ1_M,   T::Q8_K,  dequantize_row_iq1_m,   nullptr,             dot_iq1_m_q8_k},
    {T::IQ2_XXS, T::Q8_K,  dequantize_row_iq2_xxs, nullptr,             dot_iq2_xxs_q8_k},
    {T::IQ2_XS,  T::Q8_K,  dequantize_row_iq2_xs,  nullptr,             dot_iq2_xs_q8_k},
    {T::IQ2_S,   T::Q8_K,  dequantize_row_iq2_s,   nullptr,             dot_iq2_s_q8_k},
    {T::IQ3_XXS, T::Q8_K,  dequantize_row_iq3_xxs, nullptr,             dot_iq3_xxs_q8_k},
    {T::IQ3_S,   T::Q8_K,  dequantize_row_iq3_s,   nullptr,             dot_iq3_s_q8_k},
    {T::IQ4_NL,  T::Q8_0,  dequantize_row_iq4_nl,  nullptr,             dot_iq4_nl_q8_0},
    {T::IQ4_XS,  T::Q8_K,  dequantize_row_iq4_xs,  nullptr,             dot_iq4_xs_q8_k},
};

// Indexed by type id, like gguf/tensor_type.cpp.
constexpr auto kById = [] {
    std::array<const QuantTraits*, kTensorTypeIdLimit> table{};
    for (const auto& t : kTraits) table[static_cast<uint32_t>(t.type)] = &t;
    return table;
}();

}  // namespace

const QuantTraits* find_quant_traits(TensorType t) {
    const auto id = static_cast<uint32_t>(t);
    return id < kTensorTypeIdLimit ? kById[id] : nullptr;
}

const QuantTraits& quant_traits(TensorType t) {
    const QuantTraits* traits = find_quant_traits(t);
    if (!traits) {
        const std::string message = "no quant traits registered for type " + std::string(tensor_type_name(t));
        STRATA_CHECK(traits, message.c_str());
    }
    return *traits;
}

const QuantTraits* all_quant_traits(size_t* count) {
    *count = std::size(kTraits);
    return kTraits;
}

}  // namespace strata
