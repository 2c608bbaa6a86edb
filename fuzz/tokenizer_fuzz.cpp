// libFuzzer target for the tokenizers (tokenizer/tokenizer.h) with the reference vocabularies of
// the test data (SentencePiece, byte-level BPE of several pre-tokenizers, WordPiece): any prompt
// bytes, valid UTF-8 or not, with or without special-token parsing, must encode to ids inside the
// vocabulary without a crash or a hang (prompts come from clients). Where the tokenizer promises
// it (tokenizer.h: SentencePiece and byte-level BPE, valid UTF-8 without "▁", special tokens not
// parsed, every byte of the text one the vocabulary can spell), decoding must give the text back.
// The first input byte picks the vocabulary and the flags. STRATA_FUZZ_VOCABS names the folder of
// vocabularies (the ctest command sets it).
//   run: STRATA_FUZZ_VOCABS=../shared/testdata/vocab build-fuzz/bin/tokenizer_fuzz WORK_DIR -max_total_time=60
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/reader.h"
#include "tokenizer/tokenizer.h"

namespace {

struct Loaded {
    strata::Tokenizer tok;
    bool round_trips = false;                 // SentencePiece or byte-level BPE
    std::array<bool, 256> spellable{};        // bytes the vocabulary has a token for (see below)
};

std::vector<Loaded>& tokenizers() {
    static std::vector<Loaded> all;
    return all;
}

// UTF-8 of one code point below U+10000.
std::string utf8(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else if (cp < 0x800) {
        s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

// The round trip holds for text whose every byte has a token: byte-level BPE spells byte b by
// its symbol in GPT-2's byte-to-character map, SentencePiece falls back to <0xNN>. Real
// vocabularies lack some (GPT-NeoX's have no symbol for 0xC0, 0xC1 and 0xF5-0xFF, bytes valid
// UTF-8 never holds; StarCoder's also lacks 0xF1, Falcon's a few control bytes), and their
// tokenizers drop such bytes, as Hugging Face's do without an unknown token.
void find_spellable(Loaded& l) {
    const strata::Vocab& v = l.tok.vocab();
    if (v.model == strata::TokenizerModel::Spm) {
        l.round_trips = true;
        for (int b = 0; b < 256; ++b) {
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            l.spellable[static_cast<size_t>(b)] = v.find(name) >= 0;
        }
    } else if (v.model == strata::TokenizerModel::Bpe) {
        l.round_trips = true;
        uint32_t next = 256;  // bytes that are not printable Latin-1 map to 256, 257, ...
        for (uint32_t b = 0; b < 256; ++b) {
            const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            l.spellable[b] = v.find(utf8(printable ? b : next++)) >= 0;
        }
    }
}

// Well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        uint32_t cp = n == 1 ? c : c & (0x7F >> n);
        for (size_t k = 1; k < n; ++k) {
            const auto d = static_cast<unsigned char>(s[i + k]);
            if ((d >> 6) != 0x2) return false;
            cp = (cp << 6) | (d & 0x3F);
        }
        const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += n;
    }
    return true;
}

void require(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* dir = std::getenv("STRATA_FUZZ_VOCABS");
    if (dir == nullptr) {
        std::fprintf(stderr, "tokenizer_fuzz: set STRATA_FUZZ_VOCABS to a folder of vocabulary .gguf files\n");
        std::exit(2);
    }
    std::vector<std::filesystem::path> paths;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() == ".gguf") paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());  // the first byte's meaning must not depend on the listing order
    for (const auto& path : paths) {
        auto gguf = strata::GgufFile::open(path.string());
        if (!gguf.is_ok()) continue;
        auto tok = strata::Tokenizer::from_gguf(*gguf);
        if (!tok.is_ok()) continue;
        Loaded loaded{std::move(*tok)};
        find_spellable(loaded);
        tokenizers().push_back(std::move(loaded));
    }
    size_t checked = 0;
    for (const Loaded& l : tokenizers()) checked += l.round_trips ? 1 : 0;
    std::fprintf(stderr, "tokenizer_fuzz: %zu vocabularies from %s, the round trip checked on %zu\n", tokenizers().size(),
                 dir, checked);
    if (tokenizers().empty()) {
        std::fprintf(stderr, "tokenizer_fuzz: no vocabulary could be loaded from %s\n", dir);
        std::exit(2);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const Loaded& loaded = tokenizers()[data[0] % tokenizers().size()];
    const strata::Tokenizer& tok = loaded.tok;
    const bool parse_special = (data[0] & 0x80) != 0;
    const bool add_bos = (data[0] & 0x40) != 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

    const std::vector<int32_t> ids = tok.encode(text, add_bos, parse_special);
    for (const int32_t id : ids) require(tok.vocab().valid(id));
    const std::string back = tok.decode(ids);

    bool spellable = loaded.round_trips;
    for (const char c : text) spellable = spellable && loaded.spellable[static_cast<unsigned char>(c)];
    if (spellable && !parse_special && valid_utf8(text) && text.find("\xE2\x96\x81") == std::string_view::npos) {
        require(back == text);
    }
    return 0;
}
