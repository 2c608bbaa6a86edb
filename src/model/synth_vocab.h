#pragma once
// The vocabulary `strata synth` writes when no tokenizer file is given: byte-level BPE without
// merges, token i < 256 being byte i in GPT-2's printable mapping of bytes to code points, so any
// text round-trips. A model with a larger vocabulary gets placeholder tokens after the bytes
// (unused, so text never tokenizes to them) and its special tokens where it asks.
//
//   SynthVocab v = synth_byte_vocab(248320, {{248044, "<|im_end|>"}});
//   w.set_string_array("tokenizer.ggml.tokens", v.tokens);

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata {

struct SynthVocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> token_types;  // GGUF token types: 1 normal, 3 control, 5 unused
};

// `n_tokens` >= 256; `specials` (id, text) become control tokens.
SynthVocab synth_byte_vocab(uint32_t n_tokens, const std::vector<std::pair<uint32_t, std::string>>& specials = {});

}  // namespace strata
