#pragma once
// A weight tensor as the CPU ops read it: a view of bytes inside a mapped GGUF file (or a copy in
// RAM), with its type and shape. model/weights.h finds and checks them by name; the GPU's
// counterpart is DeviceWeight (backend/gpu/gpu_ops.h).

#include <cstdint>

#include "gguf/reader.h"
#include "gguf/tensor_type.h"

namespace strata {

struct Weight {
    const GgufTensorInfo* info = nullptr;  // null: tensor absent (optional weights)
    const uint8_t* data = nullptr;
    TensorType type = TensorType::F32;
    int64_t ne[4] = {1, 1, 1, 1};  // ne[0]: row length (input features); ne[1]: rows (outputs)
    uint64_t row_bytes = 0;

    explicit operator bool() const { return data != nullptr; }
    int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
    const uint8_t* row(int64_t r) const { return data + static_cast<uint64_t>(r) * row_bytes; }
    // Matrix i of a stacked 3-D tensor (expert i of ffn_*_exps): ne[1] rows of ne[0].
    const uint8_t* matrix(int64_t i) const { return data + static_cast<uint64_t>(i * ne[1]) * row_bytes; }
    // F32 vectors (norms, biases) as floats.
    const float* f32() const { return reinterpret_cast<const float*>(data); }
};

}  // namespace strata
