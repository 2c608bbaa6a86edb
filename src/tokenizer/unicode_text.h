#pragma once
// Text helpers shared by the tokenizers: UTF-8 walking and repair, and GPT-2's byte-level
// alphabet (every byte 0-255 written as one printable Unicode character, so that byte-level BPE
// vocabularies can be stored as text). Unicode character classes are not here: the regex
// pre-tokenizers get them from PCRE2 and WordPiece from ICU, both per the Unicode standard.
//
//   std::string clean = utf8_sanitize(text);            // invalid bytes -> U+FFFD
//   std::string enc = byte_level_encode(" hi");          // "Ġhi"
//   std::string raw = byte_level_decode(enc);            // " hi"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

// Length of the UTF-8 sequence a lead byte announces (1 for continuation or invalid bytes, so a
// walk over arbitrary bytes always advances).
size_t utf8_sequence_length(uint8_t lead);

// Decodes the code point at `pos` and advances `pos`. Returns false (advancing one byte) when the
// bytes there are not a well-formed UTF-8 sequence (overlong, surrogate, truncated, > U+10FFFF).
bool utf8_next(std::string_view text, size_t& pos, char32_t& cp);

void utf8_append(std::string& out, char32_t cp);

// `text` with every byte that is not part of a well-formed sequence replaced by U+FFFD (the way
// llama.cpp treats malformed input). Returns the input unchanged (no copy needed) when valid.
bool utf8_is_valid(std::string_view text);
std::string utf8_sanitize(std::string_view text);

// GPT-2 byte-level alphabet.
std::string_view byte_level_char(uint8_t byte);      // the UTF-8 text standing for `byte`
std::string byte_level_encode(std::string_view raw);
// Maps each character back to its byte; characters outside the alphabet are kept as they are.
std::string byte_level_decode(std::string_view encoded);

}  // namespace strata
