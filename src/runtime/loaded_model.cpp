#include "runtime/loaded_model.h"

#include <chrono>

#include "runtime/weights_load.h"

namespace strata {

Result<std::unique_ptr<LoadedModel>> LoadedModel::load(const std::string& path, const std::string& chat_template_override,
                                                      const ComputeOptions& compute) {
    const auto start = std::chrono::steady_clock::now();
    auto lm = std::make_unique<LoadedModel>();
    STRATA_ASSIGN_OR_RETURN(lm->file,
                            GgufFile::open(path, {}, gguf_load_for(compute, path)));
    STRATA_ASSIGN_OR_RETURN(lm->model, load_model_on(lm->file, compute));
    STRATA_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(lm->file));
    if (tok.vocab_size() != lm->model->config().n_vocab) {
        return Status::error("{}: the tokenizer has {} tokens but the model's output has {} (a mismatched vocabulary)",
                             path, tok.vocab_size(), lm->model->config().n_vocab);
    }
    lm->tokenizer.emplace(std::move(tok));
    std::string source = chat_template_override.empty() ? lm->file.get_string("tokenizer.chat_template", "")
                                                        : chat_template_override;
    if (!source.empty()) {
        auto parsed = chat_template::ChatTemplate::parse(source);
        if (!parsed) return Status::error("{}: chat template: {}", path, parsed.status().message());
        lm->chat_template.emplace(std::move(*parsed));
    }
    lm->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return lm;
}

Result<std::string> LoadedModel::render_chat(const nlohmann::ordered_json& messages, bool add_generation_prompt,
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

std::vector<int32_t> LoadedModel::tokenize_chat(const std::string& rendered) const {
    const Tokenizer& tok = *tokenizer;
    bool add_bos = tok.wants_bos() && tok.bos_id() >= 0;
    if (add_bos) {
        std::string bos = tok.token_to_piece(tok.bos_id(), true);
        if (!bos.empty() && rendered.rfind(bos, 0) == 0) add_bos = false;
    }
    return tok.encode(rendered, add_bos, /*parse_special=*/true);
}

}  // namespace strata
