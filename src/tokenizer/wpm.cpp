// WordPiece (BERT). Normalization follows Hugging Face's BertNormalizer and BertPreTokenizer,
// with ICU for the Unicode properties and transforms (general categories, White_Space, NFD,
// full lowercasing with Final_Sigma). Token texts are as llama.cpp's converter stores them:
// a word-initial piece carries a leading ▁, a continuation piece no "##".
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/locid.h>

#include "core/check.h"
#include "tokenizer/encoders.h"
#include "tokenizer/unicode_text.h"

namespace strata {
namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // ▁
constexpr int32_t kMaxWordChars = 100;  // HF WordPiece max_input_chars_per_word

bool is_whitespace(UChar32 c) { return c == '\t' || c == '\n' || c == '\r' || u_isUWhiteSpace(c); }

bool is_other_category(UChar32 c) {  // Cc, Cf, Cn, Co, Cs
    return (U_GET_GC_MASK(c) & U_GC_C_MASK) != 0;
}

// BERT's "Chinese character": the CJK Unified Ideographs blocks (with extensions A-E) and the
// CJK Compatibility Ideographs blocks, as its reference tokenizer lists them.
bool is_cjk_ideograph(UChar32 c) {
    switch (ublock_getCode(c)) {
        case UBLOCK_CJK_UNIFIED_IDEOGRAPHS:
        case UBLOCK_CJK_UNIFIED_IDEOGRAPHS_EXTENSION_A:
        case UBLOCK_CJK_UNIFIED_IDEOGRAPHS_EXTENSION_B:
        case UBLOCK_CJK_UNIFIED_IDEOGRAPHS_EXTENSION_C:
        case UBLOCK_CJK_UNIFIED_IDEOGRAPHS_EXTENSION_D:
        case UBLOCK_CJK_UNIFIED_IDEOGRAPHS_EXTENSION_E:
        case UBLOCK_CJK_COMPATIBILITY_IDEOGRAPHS:
        case UBLOCK_CJK_COMPATIBILITY_IDEOGRAPHS_SUPPLEMENT:
            return true;
        default:
            return false;
    }
}

// A character that is a word of its own: Unicode punctuation, ASCII symbols ($+<=>^`|~), CJK.
bool is_isolated(UChar32 c) {
    const uint32_t mask = U_GET_GC_MASK(c);
    return (mask & U_GC_P_MASK) != 0 || (c < 0x7F && (mask & U_GC_S_MASK) != 0) || is_cjk_ideograph(c);
}

}  // namespace

std::vector<std::string> wpm_split_words(const Vocab& vocab, std::string_view text) {
    // 1. Clean: drop NUL, U+FFFD (also what malformed UTF-8 becomes) and other-category
    //    characters; every whitespace character becomes a space.
    const icu::UnicodeString input = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), int32_t(text.size())));
    icu::UnicodeString cleaned;
    for (int32_t i = 0; i < input.length();) {
        const UChar32 c = input.char32At(i);
        i += U16_LENGTH(c);
        if (is_whitespace(c)) {
            cleaned.append(UChar32(' '));
        } else if (c != 0 && c != 0xFFFD && !is_other_category(c)) {
            cleaned.append(c);
        }
    }
    // 2. Strip accents: decompose, drop the nonspacing marks.
    if (vocab.strip_accents) {
        UErrorCode status = U_ZERO_ERROR;
        const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
        STRATA_CHECK(U_SUCCESS(status), "ICU has no NFD data");
        const icu::UnicodeString decomposed = nfd->normalize(cleaned, status);
        STRATA_CHECK(U_SUCCESS(status), "ICU NFD normalization failed");
        cleaned.remove();
        for (int32_t i = 0; i < decomposed.length();) {
            const UChar32 c = decomposed.char32At(i);
            i += U16_LENGTH(c);
            if (u_charType(c) != U_NON_SPACING_MARK) cleaned.append(c);
        }
    }
    // 3. Lowercase the whole text (context-dependent mappings such as final sigma need it).
    if (vocab.lowercase) cleaned.toLower(icu::Locale::getRoot());

    // 4. Split on whitespace; punctuation and CJK ideographs are words of their own.
    std::vector<std::string> words;
    std::string word;
    auto finish = [&] {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
    };
    for (int32_t i = 0; i < cleaned.length();) {
        const UChar32 c = cleaned.char32At(i);
        i += U16_LENGTH(c);
        if (is_whitespace(c)) {
            finish();
        } else if (is_isolated(c)) {
            finish();
            utf8_append(word, char32_t(c));
            finish();
        } else {
            utf8_append(word, char32_t(c));
        }
    }
    finish();
    return words;
}

void wpm_encode_word(const Vocab& vocab, std::string_view word, std::vector<int32_t>& out) {
    if (word.empty()) return;
    const size_t start_size = out.size();
    size_t chars = 0;
    for (char c : word) chars += (uint8_t(c) & 0xC0) != 0x80;
    if (chars <= size_t(kMaxWordChars)) {
        std::string text(kWordStart);
        text += word;
        const size_t n = text.size();
        for (size_t i = 0; i < n;) {
            size_t matched = 0;
            for (size_t j = std::min(n, i + vocab.max_token_bytes); j > i; --j) {
                const int32_t id = vocab.find(std::string_view(text).substr(i, j - i));
                if (id != kNoToken) {
                    out.push_back(id);
                    matched = j - i;
                    break;
                }
            }
            if (matched == 0) {  // the rest cannot be spelled: the whole word is unknown
                out.resize(start_size);
                break;
            }
            i += matched;
        }
    }
    if (out.size() == start_size && vocab.unk_id != kNoToken) out.push_back(vocab.unk_id);
}

}  // namespace strata
