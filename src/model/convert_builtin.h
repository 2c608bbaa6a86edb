#pragma once
// `strata convert` for the built-in model (tools/builtin_model/): turns the project's own training
// outputs into GGUF files that Strata and llama.cpp load.
//   - the tokenizer JSON of train_tokenizer.py -> a vocabulary-only GGUF (for `strata tokenize`,
//     so training sees exactly the ids Strata will produce);
//   - that JSON + a PyTorch checkpoint (safetensors, tensors already named and laid out as GGUF's
//     qwen3moe tensors) + the training config JSON -> the model GGUF, matrices quantized.
//
//   STRATA_TRY(write_builtin_vocab("tokenizer.json", "vocab.gguf"));
//   BuiltinConvertOptions o{.tokenizer_json = "tokenizer.json", .config_json = "config.json",
//                           .checkpoints = {"model.safetensors"}, .out = "model.gguf"};
//   STRATA_TRY(convert_builtin_model(o));

#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/tensor_type.h"

namespace strata {

Status write_builtin_vocab(const std::string& tokenizer_json, const std::string& out);

struct BuiltinConvertOptions {
    std::string tokenizer_json;
    std::string config_json;
    std::vector<std::string> checkpoints;  // safetensors shards; together they hold every tensor once
    std::string out;
    TensorType matrix_type = TensorType::Q8_0;  // 2-D and 3-D weights; norms and router stay F32
    std::string name = "strata-kjv-moe";
};

Status convert_builtin_model(const BuiltinConvertOptions& options);

}  // namespace strata
