#include "model/synth_vocab.h"

namespace strata {

SynthVocab synth_byte_vocab(uint32_t n_tokens, const std::vector<std::pair<uint32_t, std::string>>& specials) {
    SynthVocab v;
    int unprintable_seen = 0;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        const int cp = printable ? b : 256 + unprintable_seen++;
        std::string utf8;
        if (cp < 0x80) {
            utf8 += static_cast<char>(cp);
        } else {
            utf8 += static_cast<char>(0xC0 | (cp >> 6));
            utf8 += static_cast<char>(0x80 | (cp & 0x3F));
        }
        v.tokens.push_back(utf8);
        v.token_types.push_back(1);
    }
    for (uint32_t id = 256; id < n_tokens; ++id) {
        v.tokens.push_back("<|synth_" + std::to_string(id) + "|>");
        v.token_types.push_back(5);
    }
    for (const auto& [id, text] : specials) {
        if (id < v.tokens.size()) {
            v.tokens[id] = text;
            v.token_types[id] = 3;
        }
    }
    return v;
}

}  // namespace strata
