#include "tokenizer/chat_template/lexer.h"

#include <fmt/format.h>

#include <cctype>

#include "tokenizer/chat_template/utf8.h"
#include "tokenizer/chat_template/value.h"

namespace strata::chat_template {
namespace {

[[noreturn]] void syntax_error(int line, std::string message) {
    throw TemplateFailure{ErrorType::syntax_error, std::move(message), line};
}

int count_newlines(std::string_view s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

// Jinja normalizes \r\n and \r to \n before lexing and drops exactly one trailing newline.
std::string normalize_source(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out.push_back('\n');
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out.push_back(source[i]);
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// Number of bytes of (Unicode) whitespace at the start of s, as Python's \s* matches it.
size_t leading_space_bytes(std::string_view s) {
    std::u32string cps = utf8_decode(s);
    size_t bytes = 0;
    for (char32_t cp : cps) {
        if (!is_python_space(cp)) break;
        std::string enc;
        utf8_append(enc, cp);
        bytes += enc.size();
    }
    return bytes;
}

// Decodes the escapes of a Python string literal body, as Jinja does through "unicode-escape".
// Unknown escapes keep their backslash, as in Python.
std::string decode_string_literal(std::string_view body) {
    std::string out;
    for (size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (c != '\\' || i + 1 >= body.size()) {
            out.push_back(c);
            continue;
        }
        char e = body[++i];
        auto hex = [&](size_t digits) {
            uint32_t cp = 0;
            size_t k = 0;
            for (; k < digits && i + 1 < body.size() && std::isxdigit(static_cast<unsigned char>(body[i + 1])); ++k) {
                char h = body[++i];
                cp = cp * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                                                                                                : (std::tolower(h) - 'a' + 10));
            }
            utf8_append(out, static_cast<char32_t>(cp));
        };
        switch (e) {
            case 'n': out.push_back('\n'); break;
            case 't': out.push_back('\t'); break;
            case 'r': out.push_back('\r'); break;
            case '\\': out.push_back('\\'); break;
            case '\'': out.push_back('\''); break;
            case '"': out.push_back('"'); break;
            case 'a': out.push_back('\a'); break;
            case 'b': out.push_back('\b'); break;
            case 'f': out.push_back('\f'); break;
            case 'v': out.push_back('\v'); break;
            case '\n': break;  // backslash-newline continues the line
            case 'x': hex(2); break;
            case 'u': hex(4); break;
            case 'U': hex(8); break;
            default:
                if (e >= '0' && e <= '7') {
                    uint32_t cp = static_cast<uint32_t>(e - '0');
                    for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
                        cp = cp * 8 + static_cast<uint32_t>(body[++i] - '0');
                    }
                    utf8_append(out, static_cast<char32_t>(cp));
                } else {
                    out.push_back('\\');
                    out.push_back(e);
                }
        }
    }
    return out;
}

class Lexer {
public:
    explicit Lexer(std::string source) : src_(std::move(source)) {}

    std::vector<Token> run() {
        size_t pos = 0;
        bool line_starting = true;  // does the text that follows begin at the start of a line?
        while (pos < src_.size()) {
            size_t open = find_open(pos);
            std::string text = src_.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
            if (open == std::string::npos) {
                emit_text(std::move(text));
                break;
            }
            char kind = src_[open + 1];  // '{', '%' or '#'
            char modifier = open + 2 < src_.size() ? src_[open + 2] : '\0';
            if (modifier == '-') {
                text = python_strip(text, nullptr, false, true);
            } else if (modifier != '+' && kind != '{') {
                // lstrip_blocks: drop spaces and tabs between the line start and a {% or {#.
                size_t line_start = text.rfind('\n');
                line_start = line_start == std::string::npos ? 0 : line_start + 1;
                if ((line_start > 0 || line_starting) &&
                    text.find_first_not_of(" \t", line_start) == std::string::npos) {
                    text.resize(line_start);
                }
            }
            emit_text(std::move(text));
            size_t body = open + 2 + (modifier == '-' || modifier == '+' ? 1 : 0);
            if (kind == '#') {
                pos = lex_comment(open, body);
            } else if (kind == '%' && try_raw(body, pos)) {
                // pos advanced past {% endraw %}
            } else {
                pos = lex_tag(kind, body);
            }
            line_starting = pos > 0 && src_[pos - 1] == '\n';
        }
        tokens_.push_back({TokenType::eof, "", line_});
        return std::move(tokens_);
    }

private:
    size_t find_open(size_t from) const {
        for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
            if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
        }
        return std::string::npos;
    }

    void emit_text(std::string text) {
        if (text.empty()) return;
        int lines = count_newlines(text);
        tokens_.push_back({TokenType::text, std::move(text), line_});
        line_ += lines;
    }

    // After a closing delimiter: '-' strips all following whitespace; trim_blocks drops one newline
    // after %} and #} (not after }}); '+' keeps everything.
    size_t after_close(size_t end, char strip, bool is_block) {
        if (strip == '-') {
            size_t n = leading_space_bytes(std::string_view(src_).substr(end));
            line_ += count_newlines(std::string_view(src_).substr(end, n));
            return end + n;
        }
        if (strip != '+' && is_block && end < src_.size() && src_[end] == '\n') {
            ++line_;
            return end + 1;
        }
        return end;
    }

    size_t lex_comment(size_t open, size_t body) {
        size_t close = src_.find("#}", body);
        if (close == std::string::npos) syntax_error(line_, "Missing end of comment tag");
        line_ += count_newlines(std::string_view(src_).substr(open, close - open));
        char strip = close > body && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : '\0';
        return after_close(close + 2, strip, true);
    }

    // {% raw %}...{% endraw %}: the body is emitted verbatim.
    bool try_raw(size_t body, size_t& pos) {
        size_t i = body;
        while (i < src_.size() && std::isspace(static_cast<unsigned char>(src_[i]))) ++i;
        if (src_.compare(i, 3, "raw") != 0) return false;
        i += 3;
        while (i < src_.size() && std::isspace(static_cast<unsigned char>(src_[i]))) ++i;
        char strip = '\0';
        if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) strip = src_[i++];
        if (src_.compare(i, 2, "%}") != 0) return false;
        size_t start = after_close(i + 2, strip, true);
        for (size_t j = src_.find("{%", start); j != std::string::npos; j = src_.find("{%", j + 1)) {
            size_t k = j + 2;
            bool strip_before = k < src_.size() && src_[k] == '-';
            if (strip_before || (k < src_.size() && src_[k] == '+')) ++k;
            while (k < src_.size() && std::isspace(static_cast<unsigned char>(src_[k]))) ++k;
            if (src_.compare(k, 6, "endraw") != 0) continue;
            k += 6;
            while (k < src_.size() && std::isspace(static_cast<unsigned char>(src_[k]))) ++k;
            char end_strip = '\0';
            if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) end_strip = src_[k++];
            if (src_.compare(k, 2, "%}") != 0) continue;
            std::string text = src_.substr(start, j - start);
            if (strip_before) text = python_strip(text, nullptr, false, true);
            emit_text(std::move(text));
            line_ += count_newlines(std::string_view(src_).substr(j, k - j));
            pos = after_close(k + 2, end_strip, true);
            return true;
        }
        syntax_error(line_, "Missing end of raw directive");
    }

    size_t lex_tag(char kind, size_t body) {
        bool is_block = kind == '%';
        tokens_.push_back({is_block ? TokenType::block_begin : TokenType::variable_begin, "", line_});
        const char* close = is_block ? "%}" : "}}";
        std::vector<char> brackets;
        size_t i = body;
        while (true) {
            while (i < src_.size() && std::isspace(static_cast<unsigned char>(src_[i]))) {
                line_ += src_[i] == '\n';
                ++i;
            }
            if (i >= src_.size()) {
                syntax_error(line_, fmt::format("unexpected end of template, expected '{}'", close));
            }
            if (brackets.empty()) {
                // The closing delimiter counts only outside brackets, as in Jinja's balancing lexer.
                char strip = src_[i] == '-' || (is_block && src_[i] == '+') ? src_[i] : '\0';
                if (src_.compare(i + (strip ? 1 : 0), 2, close) == 0) {
                    tokens_.push_back({is_block ? TokenType::block_end : TokenType::variable_end, "", line_});
                    return after_close(i + (strip ? 3 : 2), strip, is_block);
                }
            }
            i = lex_expression_token(i, brackets);
        }
    }

    size_t lex_expression_token(size_t i, std::vector<char>& brackets) {
        char c = src_[i];
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < src_.size() && src_[j] != c) j += src_[j] == '\\' ? 2 : 1;
            if (j >= src_.size()) syntax_error(line_, "unexpected end of string literal");
            std::string_view raw = std::string_view(src_).substr(i + 1, j - i - 1);
            tokens_.push_back({TokenType::string, decode_string_literal(raw), line_});
            line_ += count_newlines(raw);
            return j + 1;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            size_t j = i;
            bool is_float = false;
            auto digits = [&] {
                while (j < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[j])) || src_[j] == '_')) ++j;
            };
            digits();
            if (j + 1 < src_.size() && src_[j] == '.' && std::isdigit(static_cast<unsigned char>(src_[j + 1]))) {
                is_float = true;
                ++j;
                digits();
            }
            if (j < src_.size() && (src_[j] == 'e' || src_[j] == 'E')) {
                size_t k = j + 1;
                if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
                if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
                    is_float = true;
                    j = k;
                    digits();
                }
            }
            std::string number;
            for (size_t k = i; k < j; ++k) {
                if (src_[k] != '_') number.push_back(src_[k]);
            }
            tokens_.push_back({is_float ? TokenType::floating : TokenType::integer, number, line_});
            return j;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            size_t j = i;
            while (j < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[j])) || src_[j] == '_')) ++j;
            tokens_.push_back({TokenType::name, src_.substr(i, j - i), line_});
            return j;
        }
        static const char* const two_char_ops[] = {"**", "//", "==", "!=", "<=", ">="};
        for (const char* op : two_char_ops) {
            if (src_.compare(i, 2, op) == 0) {
                tokens_.push_back({TokenType::op, op, line_});
                return i + 2;
            }
        }
        if (std::string_view("+-*/%~()[]{},.:|=<>;").find(c) == std::string_view::npos) {
            syntax_error(line_, fmt::format("unexpected char '{}' at {}", c, i));
        }
        if (c == '(' || c == '[' || c == '{') brackets.push_back(c);
        if (c == ')' || c == ']' || c == '}') {
            char expected = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (brackets.empty() || brackets.back() != expected) {
                syntax_error(line_, fmt::format("unexpected '{}'", c));
            }
            brackets.pop_back();
        }
        tokens_.push_back({TokenType::op, std::string(1, c), line_});
        return i + 1;
    }

    std::string src_;
    std::vector<Token> tokens_;
    int line_ = 1;
};

}  // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(normalize_source(source)).run(); }

}  // namespace strata::chat_template
