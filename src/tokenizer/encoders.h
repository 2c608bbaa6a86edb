#pragma once
// The three tokenizer algorithms, each on one piece of text that holds no special token.
// Internal to the tokenizer layer: Tokenizer (tokenizer.h) cuts out special tokens, splits the
// text into words, caches word results and calls these.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace strata {

// SentencePiece BPE (spm.cpp): `text` has spaces already written as ▁. Repeatedly merges the
// adjacent pair whose joined text is the highest-scoring token (leftmost on ties); pieces that
// end up outside the vocabulary become byte tokens.
void spm_encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

// Byte-level BPE (bpe.cpp) of one pre-tokenized word given as raw bytes: starts from one
// symbol per byte and applies the lowest-ranked merge first (leftmost on ties).
void bpe_encode_word(const Vocab& vocab, std::string_view raw_word, std::vector<int32_t>& out);

// WordPiece (wpm.cpp). Normalizes like Hugging Face's BertNormalizer + BertPreTokenizer
// (control characters dropped, NFD and accents stripped, lowercased, whitespace splits,
// punctuation and CJK ideographs isolated) and returns the words.
std::vector<std::string> wpm_split_words(const Vocab& vocab, std::string_view text);
// Greedy longest match of "▁" + word; a word with an unmatchable rest becomes [UNK].
void wpm_encode_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out);

}  // namespace strata
