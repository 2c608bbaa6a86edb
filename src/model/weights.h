#pragma once
// Views of weight tensors inside a mapped GGUF file, looked up by llama.cpp tensor name and
// checked against the shape the architecture expects. No bytes are copied.
//
//   WeightLoader load(gguf);
//   Weight wq = load.require("blk.0.attn_q.weight", {n_embd, n_head * head_dim});
//   Weight bias = load.optional("blk.0.attn_q.bias", {n_head * head_dim});
//   STRATA_TRY(load.status());          // the first missing or mis-shaped tensor, named

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <vector>

#include "backend/weight.h"
#include "core/status.h"
#include "gguf/reader.h"

namespace strata {

class WeightLoader {
public:
    explicit WeightLoader(const GgufFile& file) : file_(file) {}

    // Missing or mis-shaped tensors record an error (see status()) and return an empty Weight.
    Weight require(const std::string& name, std::initializer_list<int64_t> shape);
    Weight optional(const std::string& name, std::initializer_list<int64_t> shape);
    // Require F32 (norms and biases are kept F32 by every converter).
    Weight require_f32(const std::string& name, std::initializer_list<int64_t> shape);
    Weight optional_f32(const std::string& name, std::initializer_list<int64_t> shape);
    // Require a float tensor the model reads value by value (not through a matmul): F32 as it is,
    // F16 or BF16 (as some files store small tables) widened into `storage`, which must outlive the
    // Weight (a std::deque keeps its elements in place as it grows).
    Weight require_widened_f32(const std::string& name, std::initializer_list<int64_t> shape,
                               std::deque<std::vector<float>>& storage);
    // Require I32: integer tables the model reads, not multiplies (deepseek4's tid2eid routing).
    Weight require_i32(const std::string& name, std::initializer_list<int64_t> shape);

    // Every architecture's two ends: token_embd [n_embd, n_vocab], output_norm [n_embd] and output
    // [n_embd, n_vocab] (token_embd itself when the embeddings are tied).
    void embedding_and_head(int64_t n_embd, int64_t n_vocab, Weight& token_embd, Weight& output_norm, Weight& output);

    // Records a check of the caller's that failed (unless an earlier error is recorded).
    void fail(std::string message) {
        if (status_) status_ = Status::error_message(std::move(message));
    }

    const Status& status() const { return status_; }
    // The file's path, for the messages of the caller's own checks.
    const std::string& path() const { return file_.path(); }

private:
    Weight load(const std::string& name, std::initializer_list<int64_t> shape, bool required, bool f32_only,
                bool i32_only = false);
    const GgufFile& file_;
    Status status_;
};

}  // namespace strata
