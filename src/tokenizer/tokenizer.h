#pragma once
// Text <-> token ids for a GGUF model, reproducing the ids of the model's Hugging Face tokenizer
// (as llama.cpp does): SentencePiece BPE ("llama"), byte-level BPE ("gpt2", pre-tokenizer chosen
// by tokenizer.ggml.pre) and WordPiece ("bert").
//
//   STRATA_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(gguf));
//   std::vector<int32_t> ids = tok.encode("Hello world", /*add_bos=*/true, /*parse_special=*/false);
//   std::string text = tok.decode(ids);                 // "Hello world"
//   std::string piece = tok.token_to_piece(ids.back());  // " world"
//
// encode() is const and thread-safe; a bounded cache of word -> ids makes repeated words cheap.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "tokenizer/vocab.h"

namespace strata {

class GgufFile;

struct TokenizerOptions {
    // Words (pre-tokenizer pieces) whose ids are remembered; 0 turns the cache off.
    size_t word_cache_entries = size_t(1) << 16;
};

class Tokenizer {
public:
    static Result<Tokenizer> from_gguf(const GgufFile& gguf, const TokenizerOptions& options = {});
    static Result<Tokenizer> from_vocab(Vocab vocab, const TokenizerOptions& options = {});

    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;
    ~Tokenizer();

    // `add_bos`: put the BOS token first (when the vocabulary has one; see wants_bos()).
    // `parse_special`: text spelling a control token ("<|im_end|>") becomes that token; when
    // false it is tokenized as plain text. User-defined tokens are always matched whole, as Hugging
    // Face tokenizers do. No EOS/SEP is ever appended.
    std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const;

    // The bytes the ids stand for. Control and unknown tokens are left out unless
    // `render_special`. SentencePiece and WordPiece drop the one space their encoder put before
    // the text, so decode(encode(x)) == x for SPM and byte-level BPE (valid UTF-8, no ▁ in x,
    // every byte of x one the vocabulary has a byte token for: some lack a few and drop them).
    // HF's clean_up_tokenization_spaces is not applied.
    std::string decode(std::span<const int32_t> ids, bool render_special = false) const;
    // One token's bytes (may be part of a UTF-8 character); control tokens give their text
    // when `render_special`. Ids outside the vocabulary give "".
    std::string token_to_piece(int32_t id, bool render_special = true) const;

    int32_t bos_id() const { return vocab_.bos_id; }
    int32_t eos_id() const { return vocab_.eos_id; }
    int32_t eot_id() const { return vocab_.eot_id; }  // end of turn (kNoToken if none)
    int32_t unk_id() const { return vocab_.unk_id; }
    bool wants_bos() const { return vocab_.add_bos; }  // tokenizer.ggml.add_bos_token
    size_t vocab_size() const { return vocab_.size(); }
    bool is_control(int32_t id) const { return vocab_.has_attr(id, kAttrControl | kAttrUnknown); }
    const Vocab& vocab() const { return vocab_; }
    // Non-fatal problems found while loading (unknown pre-tokenizer, bad special ids, ...).
    const std::vector<std::string>& warnings() const { return vocab_.warnings; }

private:
    struct Fragment;
    class WordCache;

    Tokenizer();
    std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;
    void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const;
    void encode_word(std::string_view word, std::vector<int32_t>& out) const;

    Vocab vocab_;
    std::unique_ptr<RegexSplitter> splitter_;  // BPE only
    std::unique_ptr<WordCache> cache_;
    // First-byte filter and trie over special token texts, for cutting them out of the input.
    struct SpecialMatcher;
    std::unique_ptr<SpecialMatcher> special_;
};

}  // namespace strata
