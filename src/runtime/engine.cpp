#include "runtime/engine.h"

#include <chrono>

#include "runtime/weights_load.h"

namespace strata {

Result<std::unique_ptr<Model>> place_and_load(const GgufFile& file, ComputeOptions compute,
                                              const GpuPlacementRequest& request, GpuPlacement* placement) {
    STRATA_ASSIGN_OR_RETURN(*placement, place_on_gpu(file, compute, request));
    return load_model_on(file, compute);
}

namespace {

// The tokenizer, which must cover the model's output, and the chat template (the request's text
// before the file's own).
Status read_vocabulary(Engine& engine, const std::string& path, const std::string& template_override) {
    STRATA_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(engine.file));
    if (tok.vocab_size() != engine.model->config().n_vocab) {
        return Status::error("{}: the tokenizer has {} tokens but the model's output has {} (a mismatched vocabulary)",
                             path, tok.vocab_size(), engine.model->config().n_vocab);
    }
    engine.tokenizer.emplace(std::move(tok));
    const std::string source =
        template_override.empty() ? engine.file.get_string("tokenizer.chat_template", "") : template_override;
    if (!source.empty()) {
        auto parsed = chat_template::ChatTemplate::parse(source);
        if (!parsed) return Status::error("{}: chat template: {}", path, parsed.status().message());
        engine.chat_template.emplace(std::move(*parsed));
    }
    return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::open(EngineRequest request) {
    const auto start = std::chrono::steady_clock::now();
    const std::string& path = request.model_path;
    auto engine = std::make_unique<Engine>();
    STRATA_ASSIGN_OR_RETURN(engine->file, GgufFile::open(path, {}, gguf_load_for(request.compute, path)));
    STRATA_ASSIGN_OR_RETURN(engine->model,
                            place_and_load(engine->file, request.compute, request.placement, &engine->placement));
    if (request.tokenizer) STRATA_TRY(read_vocabulary(*engine, path, request.chat_template));
    engine->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return engine;
}

Result<std::string> Engine::render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                                        const nlohmann::ordered_json& extra) const {
    if (!chat_template) {
        return Status::error("{} has no chat template (tokenizer.chat_template); pass one with --chat-template FILE",
                             file.path());
    }
    nlohmann::ordered_json vars = extra;
    vars["messages"] = messages;
    vars["add_generation_prompt"] = add_generation_prompt;
    const Tokenizer& tok = *tokenizer;
    vars["bos_token"] = tok.bos_id() >= 0 ? tok.token_to_piece(tok.bos_id(), true) : "";
    vars["eos_token"] = tok.eos_id() >= 0 ? tok.token_to_piece(tok.eos_id(), true) : "";
    return chat_template->render(vars, chat_template::RenderOptions{});
}

std::vector<int32_t> Engine::tokenize_chat(const std::string& rendered) const {
    const Tokenizer& tok = *tokenizer;
    bool add_bos = tok.wants_bos() && tok.bos_id() >= 0;
    if (add_bos) {
        std::string bos = tok.token_to_piece(tok.bos_id(), true);
        if (!bos.empty() && rendered.rfind(bos, 0) == 0) add_bos = false;
    }
    return tok.encode(rendered, add_bos, /*parse_special=*/true);
}

}  // namespace strata
