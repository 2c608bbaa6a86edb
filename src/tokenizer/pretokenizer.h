#pragma once
// Pre-tokenizers of byte-level BPE vocabularies: the regex splits that `tokenizer.ggml.pre`
// names, and the flags that travel with each name (as llama.cpp defines them), run with PCRE2.
//
//   PreTokenizerConfig cfg = pre_tokenizer_config("qwen2");      // cfg.known tells a fallback
//   STRATA_ASSIGN_OR_RETURN(RegexSplitter split, RegexSplitter::compile(cfg.patterns));
//   std::vector<std::string_view> words;
//   split.split("Hello world", words);                           // {"Hello", " world"}

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace strata {

struct PreTokenizerConfig {
    std::string name;                    // the `tokenizer.ggml.pre` value it was chosen by
    std::string preset;                  // which regex set: "llama3", "gpt2", "default", ...
    std::vector<std::string> patterns;   // applied in order; each one splits the pieces of the last
    bool known = true;                   // false: unknown name, fell back to "default"
    bool ignore_merges = false;          // a word that is itself a token skips the merges
    bool clean_spaces = true;            // HF clean_up_tokenization_spaces (kept for decoders)
    std::optional<bool> add_bos;         // the preset's BOS default, before add_bos_token
    bool has_bos = true;                 // false: the preset has no BOS at all (chatglm)
};

// The configuration for a `tokenizer.ggml.pre` value; an empty or unknown name gives the
// "default" preset with known = false (llama.cpp warns and does the same).
PreTokenizerConfig pre_tokenizer_config(std::string_view pre_name);

// Every `tokenizer.ggml.pre` value this build recognizes, sorted.
std::vector<std::string> supported_pre_tokenizer_names();

// A sequence of compiled patterns (PCRE2, UTF + Unicode properties, JIT where available).
// Pieces are what the patterns match and also the text between matches, so no byte is dropped;
// an empty match marks a split point. `\s` means the Unicode White_Space property, as in the
// Oniguruma regexes of Hugging Face tokenizers. Thread-safe: matching uses per-thread scratch.
class RegexSplitter {
public:
    static Result<RegexSplitter> compile(const std::vector<std::string>& patterns);

    RegexSplitter();
    RegexSplitter(RegexSplitter&&) noexcept;
    RegexSplitter& operator=(RegexSplitter&&) noexcept;
    ~RegexSplitter();

    // Appends the pieces of `text`, which must be valid UTF-8 (see utf8_sanitize), to `pieces`;
    // the views point into `text`.
    void split(std::string_view text, std::vector<std::string_view>& pieces) const;

private:
    struct Pattern;
    std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace strata
