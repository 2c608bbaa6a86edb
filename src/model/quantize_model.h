#pragma once
// Re-quantizes a GGUF model to another weight type with Strata's own reference quantizers, as
// llama-quantize does without an importance matrix: 2-D and 3-D weight matrices take the target
// type, norms, biases and routers stay F32 (they are tiny and precision-critical), and a matrix
// whose rows do not divide into the target's blocks falls back to the closest type that fits.
//
//   QuantizeOptions o{.type = TensorType::Q4_K};
//   STRATA_TRY(quantize_model(input_gguf, "out-q4_k.gguf", o, progress));

#include <functional>
#include <string>

#include "core/status.h"
#include "gguf/reader.h"
#include "gguf/tensor_type.h"

namespace strata {

struct QuantizeOptions {
    TensorType type = TensorType::Q8_0;
    int threads = 0;  // 0: all
};

// The types Strata can quantize weights to (a reference quantizer and a dot product), as
// "F16, BF16, Q4_0, ...": for help texts and errors.
std::string quantize_target_names();

// The type a tensor gets: `target`, or its fallback, or the tensor's own type when it stays.
TensorType choose_quant_type(const GgufTensorInfo& tensor, TensorType target);

Status quantize_model(const GgufFile& input, const std::string& output_path, const QuantizeOptions& options,
                      const std::function<void(uint64_t done, uint64_t total)>& progress);

}  // namespace strata
