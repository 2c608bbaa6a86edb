#pragma once
// What the server tests share: a tiny synthetic model (written once per test process; its
// byte-level vocabulary round-trips any text, and with ignore_eos every generation runs to its
// max_tokens) and a minimal chat template for it.
//
//   auto lm = load_tiny_model();   // std::unique_ptr<Engine>, with kTinyChatTemplate

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "model/synth.h"
#include "runtime/engine.h"
#include "support/scratch.h"

namespace strata::server::test {

inline constexpr const char* kTinyChatTemplate =
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
    "{% if tools %}<tools>{{ tools | length }}\n{% endif %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}";

inline const std::string& tiny_model_path() {
    // Lives until the process exits: every test of the binary uses the same file.
    static strata::test::ScratchDir* dir = new strata::test::ScratchDir();
    static const std::string path = [] {
        std::string p = dir->path("tiny.gguf");
        auto spec = synth_preset("tiny");
        STRATA_CHECK(spec.is_ok(), "synth preset tiny");
        spec->n_layers = 2;  // smaller still: the tests run on shared CPUs
        Status s = write_synth_model(*spec, nullptr, p, {});
        STRATA_CHECK(s.is_ok(), s.message().c_str());
        return p;
    }();
    return path;
}

inline std::unique_ptr<Engine> load_tiny_model() {
    auto lm = Engine::open({.model_path = tiny_model_path(), .chat_template = kTinyChatTemplate});
    STRATA_CHECK(lm.is_ok(), lm.status().message().c_str());
    return std::move(*lm);
}

}  // namespace strata::server::test
