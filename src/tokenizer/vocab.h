#pragma once
// A tokenizer vocabulary as a GGUF file stores it (`tokenizer.ggml.*`): the token texts, scores
// and types, BPE merges, special token ids and the flags that change how text is split. Loading
// validates sizes and types and fills in the defaults llama.cpp uses for each tokenizer model.
//
//   STRATA_ASSIGN_OR_RETURN(Vocab vocab, Vocab::from_gguf(gguf));
//   int32_t id = vocab.find("Hello");                  // -1 when absent
//   if (vocab.model == TokenizerModel::Bpe) { ... vocab.merge(left, right) ... }
//   for (const auto& w : vocab.warnings) fmt::print(stderr, "{}\n", w);

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "tokenizer/pretokenizer.h"

namespace strata {

class GgufFile;

enum class TokenizerModel {
    Spm,  // "llama": SentencePiece BPE over scores, ▁ for spaces, <0xNN> byte fallback
    Bpe,  // "gpt2": byte-level BPE over ranked merges, regex pre-tokenizer
    Wpm,  // "bert": WordPiece, greedy longest match, ▁ marks a word start
};

// Token attributes (llama.cpp's llama_token_attr): the GGUF token type, plus strip flags that
// some models set on special tokens.
enum TokenAttr : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrLStrip = 1u << 7,  // a special token swallows the whitespace before it
    kAttrRStrip = 1u << 8,  // ... and after it
};

constexpr int32_t kNoToken = -1;

struct TokenData {
    std::string text;
    float score = 0.0f;
    uint32_t attrs = kAttrNormal;
};

// A BPE merge: the rank (priority, lower first) and the token the pair becomes.
struct BpeMerge {
    int32_t rank = 0;
    int32_t result = kNoToken;
};

struct Vocab {
    static Result<Vocab> from_gguf(const GgufFile& gguf);

    Vocab() = default;
    // The text index holds views into `tokens`: moving keeps them valid, copying would not.
    Vocab(Vocab&&) noexcept = default;
    Vocab& operator=(Vocab&&) noexcept = default;
    Vocab(const Vocab&) = delete;
    Vocab& operator=(const Vocab&) = delete;

    int32_t find(std::string_view text) const {
        auto it = index.find(text);
        return it == index.end() ? kNoToken : it->second;
    }
    const BpeMerge* merge(int32_t left, int32_t right) const {
        auto it = merges.find((uint64_t(uint32_t(left)) << 32) | uint32_t(right));
        return it == merges.end() ? nullptr : &it->second;
    }
    size_t size() const { return tokens.size(); }
    bool valid(int32_t id) const { return id >= 0 && size_t(id) < tokens.size(); }
    bool has_attr(int32_t id, uint32_t attr) const { return valid(id) && (tokens[size_t(id)].attrs & attr) != 0; }

    TokenizerModel model = TokenizerModel::Spm;
    std::string model_name;   // tokenizer.ggml.model
    PreTokenizerConfig pre;   // BPE only: from tokenizer.ggml.pre

    std::vector<TokenData> tokens;
    std::unordered_map<std::string_view, int32_t> index;  // text -> id (views into tokens)
    std::unordered_map<uint64_t, BpeMerge> merges;         // (left id << 32 | right id)
    // The token standing for each raw byte: SPM <0xNN> (or the one-byte token), BPE the
    // byte-level character's token. kNoToken when the vocabulary lacks it.
    std::array<int32_t, 256> byte_tokens{};
    // Control, user-defined and unknown tokens, longest text first (ties by id): the order in
    // which they are cut out of the input.
    std::vector<int32_t> special_tokens;
    size_t max_token_bytes = 0;

    int32_t bos_id = kNoToken, eos_id = kNoToken, eot_id = kNoToken, unk_id = kNoToken;
    int32_t sep_id = kNoToken, pad_id = kNoToken, mask_id = kNoToken;

    bool add_bos = false;                   // the model wants BOS (tokenizer.ggml.add_bos_token)
    bool add_eos = false;
    bool add_space_prefix = false;          // SPM: a space before text that starts a fragment
    bool remove_extra_whitespaces = false;  // read for completeness; llama.cpp ignores it for SPM too
    bool lowercase = true;                  // WPM normalizer
    bool strip_accents = true;              // WPM normalizer
    // SPM: no token has ▁ right after a non-▁ character, so text can be encoded word by word
    // (at every "x▁" boundary) with the same result as encoding it whole.
    bool spm_splits_at_spaces = false;

    std::vector<std::string> warnings;  // things a caller may want to show (unknown pre, ...)
};

}  // namespace strata
