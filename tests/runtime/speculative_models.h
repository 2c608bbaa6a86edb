#pragma once
// The models the speculative decoding tests run on: every reference fixture, the project's
// qwen4exp and deepseek4 fixtures (deepseek4's compressor state rolls back with the recurrent
// state) and the built-in model, by the names of test::model_fixture_stem ("builtin":
// models/strata-kjv-moe.gguf of the checkout).

#include <memory>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "model/model.h"
#include "support/testdata.h"

namespace strata::test {

inline std::vector<std::string> speculative_test_models() {
    return {"llama",     "qwen3",     "qwen3moe",         "mixtral",           "deepseek3", "gptoss",
            "qwen3next", "qwen35moe", "project:qwen4exp", "project:deepseek4", "builtin"};
}

inline std::string speculative_model_path(const std::string& name) {
    if (name == "builtin") return project_root() + "/models/strata-kjv-moe.gguf";
    return model_fixture_stem(name) + ".gguf";
}

// A model and the file it maps (the file must outlive it).
struct OpenedModel {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> model;
};

inline OpenedModel open_speculative_test_model(const std::string& name) {
    OpenedModel m;
    auto file = GgufFile::open(speculative_model_path(name));
    EXPECT_TRUE(file) << file.status().message();
    if (!file) return m;
    m.file = std::make_unique<GgufFile>(std::move(*file));
    auto model = Model::load(*m.file);
    EXPECT_TRUE(model) << model.status().message();
    if (model) m.model = std::move(*model);
    return m;
}

}  // namespace strata::test
