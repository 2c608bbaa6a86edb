#pragma once
// The one assembly of a model for running it, used by every command that runs one (run, chat,
// serve, bench, perplexity, profile) and by the server's tests: the GGUF is opened once, the
// memory plan places the model (plan/, runtime/gpu_placement.h: the expert tiers when VRAM is
// short), the weights, KV-sized buffers and tiers are built where the plan says, then the
// tokenizer and chat template are read. Flags map into the request in one place
// (cli/engine_flags.h); nothing here reads the environment.
//
//   EngineRequest req{.model_path = "model.gguf"};           // the CPU unless req.compute says
//   STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine, Engine::open(std::move(req)));
//   auto ids = engine->tokenizer->encode("Hello", engine->tokenizer->wants_bos(), false);
//   STRATA_ASSIGN_OR_RETURN(std::string prompt, engine->render_chat(messages, /*add_generation_prompt=*/true));

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gguf/reader.h"
#include "model/gpu/gpu_model.h"
#include "model/model.h"
#include "runtime/gpu_placement.h"
#include "tokenizer/chat_template/template.h"
#include "tokenizer/tokenizer.h"

namespace strata {

struct EngineRequest {
    std::string model_path;
    ComputeOptions compute = {};          // where the model runs; the placement adds the plan's choices
    GpuPlacementRequest placement = {};   // budgets, the context and batch the plan reserves, the tiers
    std::string chat_template = {};       // a template's text to use instead of the file's own
    bool tokenizer = true;                // false: a command that feeds token ids (bench) needs no vocabulary
};

struct Engine {
    GgufFile file;
    GpuPlacement placement;  // tiered stays false on the CPU and for models that fit
    std::unique_ptr<Model> model;
    std::optional<Tokenizer> tokenizer;                        // absent only when the request asked for none
    std::optional<chat_template::ChatTemplate> chat_template;  // absent when the file has none
    double load_seconds = 0.0;

    static Result<std::unique_ptr<Engine>> open(EngineRequest request);

    // Renders messages ([{role, content}, ...]) with the model's template, its BOS/EOS strings
    // and any extra variables (tools, enable_thinking, ...).
    Result<std::string> render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                    const nlohmann::ordered_json& extra = nlohmann::ordered_json::object()) const;
    // Token ids of a rendered chat prompt: special tokens parsed, BOS added only when the
    // tokenizer wants one and the template did not already write it.
    std::vector<int32_t> tokenize_chat(const std::string& rendered) const;
};

// The model half of Engine::open for a file already open (parity opens the model and its
// reference together): the plan's placement into *placement, then the weights where it says.
Result<std::unique_ptr<Model>> place_and_load(const GgufFile& file, ComputeOptions compute,
                                              const GpuPlacementRequest& request, GpuPlacement* placement);

}  // namespace strata
