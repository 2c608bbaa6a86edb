#pragma once
// Views of weight tensors inside a mapped GGUF file, looked up by llama.cpp tensor name and
// checked against the shape the architecture expects. No bytes are copied.
//
//   WeightLoader load(gguf);
//   Weight wq = load.require("blk.0.attn_q.weight", {n_embd, n_head * head_dim});
//   Weight bias = load.optional("blk.0.attn_q.bias", {n_head * head_dim});
//   STRATA_TRY(load.status());          // the first missing or mis-shaped tensor, named

#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/status.h"
#include "gguf/reader.h"

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

class WeightLoader {
public:
    explicit WeightLoader(const GgufFile& file) : file_(file) {}

    // Missing or mis-shaped tensors record an error (see status()) and return an empty Weight.
    Weight require(const std::string& name, std::initializer_list<int64_t> shape);
    Weight optional(const std::string& name, std::initializer_list<int64_t> shape);
    // Require F32 (norms and biases are kept F32 by every converter).
    Weight require_f32(const std::string& name, std::initializer_list<int64_t> shape);
    Weight optional_f32(const std::string& name, std::initializer_list<int64_t> shape);

    // Every architecture's two ends: token_embd [n_embd, n_vocab], output_norm [n_embd] and output
    // [n_embd, n_vocab] (token_embd itself when the embeddings are tied).
    void embedding_and_head(int64_t n_embd, int64_t n_vocab, Weight& token_embd, Weight& output_norm, Weight& output);

    const Status& status() const { return status_; }

private:
    Weight load(const std::string& name, std::initializer_list<int64_t> shape, bool required, bool f32_only);
    const GgufFile& file_;
    Status status_;
};

}  // namespace strata
