#include "cli/profile_prompts.h"

#include <nlohmann/json.hpp>

#include "core/file.h"

namespace strata::cli {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r") == std::string::npos; }

// One JSONL line: {"prompt": "..."} or {"messages": [...]}.
Result<std::vector<int32_t>> tokenize_json_line(const std::string& line, const Engine& lm) {
    // ordered_json keeps the message fields in the order written, as the chat template expects.
    const auto j = nlohmann::ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
        return Status::error("expected a JSON object such as {{\"prompt\": \"...\"}} or {{\"messages\": [...]}}");
    const auto prompt = j.find("prompt");
    const auto messages = j.find("messages");
    if ((prompt == j.end()) == (messages == j.end()))
        return Status::error("expected exactly one of \"prompt\" and \"messages\"");
    if (prompt != j.end()) {
        if (!prompt->is_string()) return Status::error("\"prompt\": expected a string");
        const Tokenizer& tok = *lm.tokenizer;
        return tok.encode(prompt->get<std::string>(), tok.wants_bos(), /*parse_special=*/false);
    }
    if (!messages->is_array() || messages->empty())
        return Status::error("\"messages\": expected a non-empty array of {{\"role\", \"content\"}} objects");
    STRATA_ASSIGN_OR_RETURN(std::string rendered, lm.render_chat(*messages, /*add_generation_prompt=*/true));
    return lm.tokenize_chat(rendered);
}

}  // namespace

Result<std::vector<ProfilePrompt>> read_profile_prompts(const std::string& path, const Engine& lm) {
    STRATA_ASSIGN_OR_RETURN(std::string text, read_file_to_string(path));
    const bool jsonl = ends_with(path, ".jsonl") || ends_with(path, ".ndjson");
    const Tokenizer& tok = *lm.tokenizer;
    std::vector<ProfilePrompt> prompts;
    size_t line_no = 0, begin = 0;
    while (begin < text.size()) {
        size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(begin, end - begin);
        begin = end + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();  // files written on Windows
        if (is_blank(line)) continue;
        ProfilePrompt p{line_no, {}};
        if (jsonl) {
            auto tokens = tokenize_json_line(line, lm);
            if (!tokens) return Status::error("{} line {}: {}", path, line_no, tokens.status().message());
            p.tokens = std::move(*tokens);
        } else {
            p.tokens = tok.encode(line, tok.wants_bos(), /*parse_special=*/false);
        }
        if (p.tokens.empty()) continue;  // nothing to run (cannot happen with a BOS, but may without)
        prompts.push_back(std::move(p));
    }
    if (prompts.empty())
        return Status::error("{}: expected at least one prompt (one per line{}), got none", path,
                             jsonl ? ", as JSON objects" : "");
    return prompts;
}

}  // namespace strata::cli
