#pragma once
// Everything `run`, `chat` and `serve` load from a GGUF: the mapped file, the model, its
// tokenizer and its chat template, with the time it took.
//
//   STRATA_ASSIGN_OR_RETURN(auto lm, LoadedModel::load("model.gguf"));
//   auto ids = lm->tokenizer.encode("Hello", lm->tokenizer.wants_bos(), false);
//   STRATA_ASSIGN_OR_RETURN(std::string prompt, lm->render_chat(messages, /*add_generation_prompt=*/true));

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/gpu/gpu_model.h"
#include "gguf/reader.h"
#include "model/model.h"
#include "tokenizer/chat_template/template.h"
#include "tokenizer/tokenizer.h"

namespace strata {

struct LoadedModel {
    GgufFile file;
    std::unique_ptr<Model> model;
    std::optional<Tokenizer> tokenizer;
    std::optional<chat_template::ChatTemplate> chat_template;  // absent when the file has none
    double load_seconds = 0.0;

    // `chat_template_override`: a template file's text to use instead of the file's own;
    // `compute`: where the model runs (the CPU unless told otherwise).
    static Result<std::unique_ptr<LoadedModel>> load(const std::string& path,
                                                      const std::string& chat_template_override = "",
                                                      const ComputeOptions& compute = {});

    // Renders messages ([{role, content}, ...]) with the model's template, its BOS/EOS strings
    // and any extra variables (tools, enable_thinking, ...).
    Result<std::string> render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                    const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;
    // Token ids of a rendered chat prompt: special tokens parsed, BOS added only when the
    // tokenizer wants one and the template did not already write it.
    std::vector<int32_t> tokenize_chat(const std::string& rendered) const;
};

}  // namespace strata
