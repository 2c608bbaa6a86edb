#include "tokenizer/unicode_text.h"

#include <array>

namespace strata {

size_t utf8_sequence_length(uint8_t lead) {
    if (lead < 0x80) return 1;
    if ((lead & 0xE0) == 0xC0) return 2;
    if ((lead & 0xF0) == 0xE0) return 3;
    if ((lead & 0xF8) == 0xF0) return 4;
    return 1;
}

bool utf8_next(std::string_view text, size_t& pos, char32_t& cp) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    const uint8_t lead = byte(pos);
    const size_t len = utf8_sequence_length(lead);
    if (len == 1) {
        cp = lead;
        pos += 1;
        return lead < 0x80;
    }
    if (pos + len > text.size()) {
        cp = lead;
        pos += 1;
        return false;
    }
    char32_t value = lead & (0x7F >> len);
    for (size_t i = 1; i < len; ++i) {
        const uint8_t b = byte(pos + i);
        if ((b & 0xC0) != 0x80) {
            cp = lead;
            pos += 1;
            return false;
        }
        value = (value << 6) | (b & 0x3F);
    }
    // Reject overlong forms, UTF-16 surrogates and values past the Unicode range.
    static constexpr char32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (value < kMinForLength[len] || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
        cp = lead;
        pos += 1;
        return false;
    }
    cp = value;
    pos += len;
    return true;
}

void utf8_append(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

bool utf8_is_valid(std::string_view text) {
    size_t pos = 0;
    char32_t cp = 0;
    while (pos < text.size()) {
        // ASCII fast path: most text is ASCII, and the regex splitter checks whole fragments.
        if (static_cast<uint8_t>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        if (!utf8_next(text, pos, cp)) return false;
    }
    return true;
}

std::string utf8_sanitize(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t start = pos;
        char32_t cp = 0;
        if (utf8_next(text, pos, cp)) {
            out.append(text.substr(start, pos - start));
        } else {
            utf8_append(out, 0xFFFD);
        }
    }
    return out;
}

namespace {

// GPT-2's bytes_to_unicode(): the printable Latin-1 bytes stand for themselves; the other 68
// bytes (controls, space, 0x7F-0xA0, 0xAD) are moved, in byte order, to U+0100 and up.
struct ByteLevelTable {
    std::array<std::string, 256> text;
    std::array<int16_t, 512> byte_of_cp;  // every character of the alphabet is below U+0200

    ByteLevelTable() {
        byte_of_cp.fill(-1);
        char32_t next_moved = 0x100;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            const char32_t cp = printable ? static_cast<char32_t>(b) : next_moved++;
            utf8_append(text[b], cp);
            byte_of_cp[cp] = static_cast<int16_t>(b);
        }
    }
};

const ByteLevelTable& byte_level_table() {
    static const ByteLevelTable table;  // a constant of the format, built once
    return table;
}

}  // namespace

std::string_view byte_level_char(uint8_t byte) { return byte_level_table().text[byte]; }

std::string byte_level_encode(std::string_view raw) {
    const auto& table = byte_level_table();
    std::string out;
    out.reserve(raw.size() * 2);
    for (char c : raw) out += table.text[static_cast<uint8_t>(c)];
    return out;
}

std::string byte_level_decode(std::string_view encoded) {
    const auto& table = byte_level_table();
    std::string out;
    out.reserve(encoded.size());
    size_t pos = 0;
    while (pos < encoded.size()) {
        const size_t start = pos;
        char32_t cp = 0;
        const bool ok = utf8_next(encoded, pos, cp);
        if (ok && cp < table.byte_of_cp.size() && table.byte_of_cp[cp] >= 0) {
            out += static_cast<char>(table.byte_of_cp[cp]);
        } else {
            out.append(encoded.substr(start, pos - start));
        }
    }
    return out;
}

}  // namespace strata
