#pragma once
// The tensor element types of the GGUF format (ggml's type ids, as stored in tensor infos) and
// their block layout: how many values a block holds and how many bytes it takes. The behaviour of
// each type (dequantize, dot product) is registered in quant/traits.h; this table is only the file
// format's layout, which the reader needs to validate tensor sizes.
//
//   const TensorTypeInfo* info = tensor_type_info(TensorType::Q4_K);   // nullptr if unknown id
//   uint64_t bytes = info->row_bytes(4096);

#include <cstdint>
#include <optional>
#include <string_view>

namespace strata {

enum class TensorType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
    Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
    I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
    TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39, NVFP4 = 40, Q1_0 = 41, Q2_0 = 42,
};

struct TensorTypeInfo {
    TensorType type;
    std::string_view name;  // as llama.cpp prints it: "Q4_K", "F16", "IQ2_XXS"
    uint32_t block_size;    // values per block
    uint32_t block_bytes;   // bytes per block

    // Bytes of a row of `n` values; n must be a multiple of block_size (see row_fits).
    uint64_t row_bytes(uint64_t n) const { return n / block_size * block_bytes; }
    bool row_fits(uint64_t n) const { return n % block_size == 0; }
};

// nullptr for ids that no GGUF writer produces (removed or unknown types).
const TensorTypeInfo* tensor_type_info(uint32_t id);
// One past the largest id in the table (tables indexed by type id are this long).
inline constexpr uint32_t kTensorTypeIdLimit = 43;
inline const TensorTypeInfo* tensor_type_info(TensorType t) { return tensor_type_info(static_cast<uint32_t>(t)); }
std::string_view tensor_type_name(TensorType t);
std::optional<TensorType> tensor_type_from_name(std::string_view name);

// Every known type, in id order (for tables, tests and `strata inspect`).
const TensorTypeInfo* all_tensor_types(size_t* count);

}  // namespace strata
