#include "runtime/grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace strata {

namespace {

// Bounds what one `{m,n}` may expand to: each repetition is a rule of its own.
constexpr uint32_t kMaxRepetition = 10000;

struct Item {
    bool is_rule = false;
    bool negated = false;
    uint32_t rule = 0;
    std::vector<CodePointRange> ranges;
};
using Sequence = std::vector<Item>;

struct RuleDraft {
    std::string name;
    std::vector<Sequence> alternatives;
    bool defined = false;
    size_t first_use = 0;  // offset of the first reference, for "undefined rule" errors
};

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

std::string shown_at(std::string_view text, size_t pos) {
    if (pos >= text.size()) return "the end of the grammar";
    std::string_view rest = text.substr(pos, 12);
    if (size_t nl = rest.find('\n'); nl != std::string_view::npos) rest = rest.substr(0, nl);
    if (rest.empty()) return "a line break";
    return fmt::format("'{}'", rest);
}

class Parser {
public:
    explicit Parser(std::string_view text) : text_(text) {}

    Result<Grammar> parse(std::string_view root_name) {
        skip_blank_lines();
        while (pos_ < text_.size()) {
            if (auto s = parse_rule(); !s) return s;
            skip_blank_lines();
        }
        for (const RuleDraft& r : rules_) {
            if (!r.defined) return error_at(r.first_use, fmt::format("rule '{}' is used but never defined", r.name), "define it as `" + r.name + " ::= ...`");
        }
        auto root = names_.find(std::string(root_name));
        if (root == names_.end()) {
            return Status::error("grammar: expected a rule named '{}' (the start rule), got none — add `{} ::= ...`", root_name, root_name);
        }
        if (auto s = check_left_recursion(); !s) return s;
        return flatten(root->second);
    }

private:
    Status error_at(size_t pos, std::string_view what, std::string_view hint) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < pos && i < text_.size(); ++i) {
            if (text_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        return Status::error("grammar: line {}, column {}: {} — {}", line, col, what, hint);
    }
    Status expected(std::string_view what, std::string_view hint) const {
        return error_at(pos_, fmt::format("expected {}, got {}", what, shown_at(text_, pos_)), hint);
    }

    bool at_end() const { return pos_ >= text_.size(); }
    char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

    void skip_comment() {
        while (!at_end() && peek() != '\n') ++pos_;
    }
    // Spaces and comments; line breaks too when `newlines`.
    void skip_space(bool newlines) {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == '#') {
                skip_comment();
            } else if (c == '\n' && newlines) {
                ++pos_;
            } else {
                break;
            }
        }
    }
    void skip_blank_lines() { skip_space(true); }

    // At a line break outside any group: the rule goes on unless what follows starts a new rule
    // (`name ::=`) or ends the text, so alternatives may continue on the next line ("| b").
    bool rule_continues_after_newline() const {
        size_t p = pos_;
        while (p < text_.size()) {
            const char c = text_[p];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                ++p;
            } else if (c == '#') {
                while (p < text_.size() && text_[p] != '\n') ++p;
            } else {
                break;
            }
        }
        if (p >= text_.size()) return false;
        size_t q = p;
        while (q < text_.size() && is_name_char(text_[q])) ++q;
        if (q == p) return true;
        while (q < text_.size() && (text_[q] == ' ' || text_[q] == '\t')) ++q;
        return text_.substr(q, 3) != "::=";
    }

    uint32_t rule_id(const std::string& name, size_t use_pos) {
        auto [it, added] = names_.try_emplace(name, static_cast<uint32_t>(rules_.size()));
        if (added) rules_.push_back(RuleDraft{name, {}, false, use_pos});
        return it->second;
    }
    uint32_t new_rule(const std::string& parent, std::vector<Sequence> alternatives) {
        const std::string name = fmt::format("{}#{}", parent, ++generated_);
        const uint32_t id = rule_id(name, pos_);
        rules_[id].alternatives = std::move(alternatives);
        rules_[id].defined = true;
        return id;
    }

    Status parse_rule() {
        const size_t start = pos_;
        while (!at_end() && is_name_char(peek())) ++pos_;
        if (pos_ == start) return expected("a rule name ([a-zA-Z0-9_-]+)", "each rule reads `name ::= alternatives`");
        const std::string name(text_.substr(start, pos_ - start));
        skip_space(false);
        if (text_.substr(pos_, 3) != "::=") return expected("'::=' after the rule name '" + name + "'", "each rule reads `name ::= alternatives`");
        pos_ += 3;
        const uint32_t id = rule_id(name, start);
        if (rules_[id].defined) return error_at(start, fmt::format("rule '{}' is defined twice", name), "merge the definitions with '|'");
        rules_[id].defined = true;  // before the body: the body may refer to the rule itself
        current_ = name;
        skip_space(false);
        std::vector<Sequence> alts;
        STRATA_TRY(parse_alternatives(/*nested=*/false, alts));
        rules_[id].alternatives = std::move(alts);
        if (!at_end() && peek() != '\n') return expected("a line break after the rule '" + name + "'", "one rule per line; check for an unbalanced quote or bracket");
        return Status::ok();
    }

    Status parse_alternatives(bool nested, std::vector<Sequence>& out) {
        while (true) {
            Sequence seq;
            STRATA_TRY(parse_sequence(nested, seq));
            out.push_back(std::move(seq));
            if (peek() != '|') return Status::ok();
            ++pos_;
            skip_space(true);
        }
    }

    Status parse_sequence(bool nested, Sequence& seq) {
        while (true) {
            skip_space(nested);
            if (!nested && peek() == '\n') {
                if (!rule_continues_after_newline()) return Status::ok();
                skip_space(true);
            }
            const char c = peek();
            if (at_end() || c == '|' || c == ')') {
                if (c == ')' && !nested) return expected("an element", "this ')' closes no group");
                return Status::ok();
            }
            Item item;
            STRATA_TRY(parse_primary(item));
            STRATA_TRY(parse_repetition(item, seq));
        }
    }

    Status parse_primary(Item& item) {
        const char c = peek();
        if (c == '"') {
            ++pos_;
            std::vector<Item> chars;
            while (!at_end() && peek() != '"') {
                if (peek() == '\n') break;
                uint32_t cp = 0;
                STRATA_TRY(read_char(cp));
                chars.push_back(Item{false, false, 0, {{cp, cp}}});
            }
            if (peek() != '"') return expected("'\"' closing the string literal", "close the string on the same line; write \\\" for a quote inside it");
            ++pos_;
            if (chars.size() == 1) {
                item = std::move(chars[0]);
            } else {  // a literal is a sequence: a rule of one alternative (empty literal: ε)
                item = Item{true, false, new_rule(current_, {std::move(chars)}), {}};
            }
            return Status::ok();
        }
        if (c == '[') {
            ++pos_;
            item.is_rule = false;
            if (peek() == '^') {
                item.negated = true;
                ++pos_;
            }
            while (!at_end() && peek() != ']') {
                if (peek() == '\n') break;
                uint32_t lo = 0;
                STRATA_TRY(read_char(lo));
                uint32_t hi = lo;
                if (peek() == '-' && peek(1) != ']' && pos_ + 1 < text_.size()) {
                    ++pos_;
                    const size_t at = pos_;
                    STRATA_TRY(read_char(hi));
                    if (hi < lo) return error_at(at, fmt::format("expected a range's end at or above U+{:04X}, got U+{:04X}", lo, hi), "write ranges low-high, e.g. [a-z]");
                }
                item.ranges.push_back({lo, hi});
            }
            if (peek() != ']') return expected("']' closing the character class", "close the class on the same line; write \\] for a bracket inside it");
            ++pos_;
            return Status::ok();
        }
        if (c == '.') {
            ++pos_;
            item = Item{false, true, 0, {}};  // the negation of nothing: any code point
            return Status::ok();
        }
        if (c == '(') {
            ++pos_;
            skip_space(true);
            std::vector<Sequence> alts;
            STRATA_TRY(parse_alternatives(/*nested=*/true, alts));
            skip_space(true);
            if (peek() != ')') return expected("')' closing the group", "balance the parentheses");
            ++pos_;
            item = Item{true, false, new_rule(current_, std::move(alts)), {}};
            return Status::ok();
        }
        if (is_name_char(c)) {
            const size_t start = pos_;
            while (!at_end() && is_name_char(peek())) ++pos_;
            const std::string name(text_.substr(start, pos_ - start));
            skip_space(false);
            if (text_.substr(pos_, 3) == "::=") {
                return error_at(start, fmt::format("expected the end of the rule '{}' before the new rule '{}'", current_, name),
                                "start each rule on its own line");
            }
            item = Item{true, false, rule_id(name, start), {}};
            return Status::ok();
        }
        return expected("a string \"...\", a class [...], a rule name, '.' or '('", "check the element at this position");
    }

    Status read_number(uint32_t& out) {
        const size_t start = pos_;
        uint64_t v = 0;
        while (!at_end() && peek() >= '0' && peek() <= '9') {
            v = v * 10 + static_cast<uint64_t>(peek() - '0');
            if (v > kMaxRepetition) return error_at(start, fmt::format("expected a repetition count up to {}", kMaxRepetition), "use * or + for unbounded repetition");
            ++pos_;
        }
        if (pos_ == start) return expected("a number", "repetitions read {m}, {m,} or {m,n}");
        out = static_cast<uint32_t>(v);
        return Status::ok();
    }

    // Applies a postfix operator (if any) to `item` and appends the result to `seq`.
    Status parse_repetition(Item item, Sequence& seq) {
        uint32_t min = 1, max = 1;
        bool unbounded = false;
        const char c = peek();
        if (c == '*') {
            min = 0;
            unbounded = true;
            ++pos_;
        } else if (c == '+') {
            unbounded = true;
            ++pos_;
        } else if (c == '?') {
            min = 0;
            ++pos_;
        } else if (c == '{') {
            const size_t start = pos_;
            ++pos_;
            skip_space(false);
            STRATA_TRY(read_number(min));
            skip_space(false);
            max = min;
            if (peek() == ',') {
                ++pos_;
                skip_space(false);
                if (peek() == '}') {
                    unbounded = true;
                } else {
                    STRATA_TRY(read_number(max));
                    skip_space(false);
                }
            }
            if (peek() != '}') return expected("'}' closing the repetition", "repetitions read {m}, {m,} or {m,n}");
            ++pos_;
            if (!unbounded && max < min) return error_at(start, fmt::format("expected {{m,n}} with n >= m, got {{{},{}}}", min, max), "swap the bounds");
        } else {
            seq.push_back(std::move(item));
            return Status::ok();
        }
        for (uint32_t i = 0; i < min; ++i) seq.push_back(item);
        if (unbounded) {  // R ::= item R | ε
            const uint32_t r = new_rule(current_, {});
            rules_[r].alternatives = {Sequence{item, Item{true, false, r, {}}}, Sequence{}};
            seq.push_back(Item{true, false, r, {}});
        } else if (max > min) {  // R_k ::= item R_{k-1} | ε, R_1 ::= item | ε
            uint32_t inner = new_rule(current_, {Sequence{item}, Sequence{}});
            for (uint32_t k = 2; k <= max - min; ++k) inner = new_rule(current_, {Sequence{item, Item{true, false, inner, {}}}, Sequence{}});
            seq.push_back(Item{true, false, inner, {}});
        }
        return Status::ok();
    }

    // One character of a literal or class, escapes decoded; UTF-8 is read as one code point.
    Status read_char(uint32_t& cp) {
        const auto byte = static_cast<unsigned char>(peek());
        if (byte == '\\') {
            const size_t at = pos_;
            ++pos_;
            const char e = peek();
            ++pos_;
            switch (e) {
                case 'n': cp = '\n'; return Status::ok();
                case 'r': cp = '\r'; return Status::ok();
                case 't': cp = '\t'; return Status::ok();
                case '\\': case '"': case '[': case ']': case '-': case '^': case '/': case '.': case '\'':
                    cp = static_cast<unsigned char>(e);
                    return Status::ok();
                case 'x': return read_hex(2, cp);
                case 'u': return read_hex(4, cp);
                case 'U': return read_hex(8, cp);
                default: break;
            }
            pos_ = at;
            return expected("an escape (\\n \\r \\t \\\\ \\\" \\] \\xHH \\uHHHH \\UHHHHHHHH)", "escape only these characters");
        }
        int len = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xE ? 3 : (byte >> 3) == 0x1E ? 4 : 0;
        if (len == 0 || pos_ + static_cast<size_t>(len) > text_.size()) return expected("UTF-8 text", "save the grammar as UTF-8");
        cp = len == 1 ? byte : len == 2 ? (byte & 0x1Fu) : len == 3 ? (byte & 0x0Fu) : (byte & 0x07u);
        for (int i = 1; i < len; ++i) {
            const auto b = static_cast<unsigned char>(text_[pos_ + static_cast<size_t>(i)]);
            if ((b & 0xC0) != 0x80) return expected("UTF-8 text", "save the grammar as UTF-8");
            cp = (cp << 6) | (b & 0x3Fu);
        }
        pos_ += static_cast<size_t>(len);
        return Status::ok();
    }
    Status read_hex(int digits, uint32_t& cp) {
        cp = 0;
        for (int i = 0; i < digits; ++i) {
            const char h = peek();
            uint32_t v = 0;
            if (h >= '0' && h <= '9') v = static_cast<uint32_t>(h - '0');
            else if (h >= 'a' && h <= 'f') v = static_cast<uint32_t>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v = static_cast<uint32_t>(h - 'A' + 10);
            else return expected(fmt::format("{} hexadecimal digits", digits), "e.g. \\x41, \\u00e9");
            cp = cp * 16 + v;
            ++pos_;
        }
        if (cp > 0x10FFFF) return expected("a code point up to U+10FFFF", "check the escape");
        return Status::ok();
    }

    // A rule whose expansion reaches itself before consuming a character would make a top-down
    // matcher loop: refuse it, naming the cycle's rule.
    Status check_left_recursion() const {
        const size_t n = rules_.size();
        std::vector<char> nullable(n, 0);
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t r = 0; r < n; ++r) {
                if (nullable[r]) continue;
                for (const Sequence& seq : rules_[r].alternatives) {
                    bool all = true;
                    for (const Item& it : seq) all = all && it.is_rule && nullable[it.rule];
                    if (all) {
                        nullable[r] = 1;
                        changed = true;
                        break;
                    }
                }
            }
        }
        // rule → the rules it may start with
        std::vector<std::vector<uint32_t>> starts(n);
        for (size_t r = 0; r < n; ++r) {
            for (const Sequence& seq : rules_[r].alternatives) {
                for (const Item& it : seq) {
                    if (!it.is_rule) break;
                    starts[r].push_back(it.rule);
                    if (!nullable[it.rule]) break;
                }
            }
        }
        std::vector<int> state(n, 0);  // 0 unseen, 1 on the path, 2 done
        std::optional<uint32_t> cycle;
        std::function<void(uint32_t)> visit = [&](uint32_t r) {
            state[r] = 1;
            for (uint32_t s : starts[r]) {
                if (cycle) return;
                if (state[s] == 1) cycle = s;
                else if (state[s] == 0) visit(s);
            }
            state[r] = 2;
        };
        for (uint32_t r = 0; r < n && !cycle; ++r) {
            if (state[r] == 0) visit(r);
        }
        if (!cycle) return Status::ok();
        // Generated rules carry their parent's name before the last '-'.
        std::string name = rules_[*cycle].name;
        return Status::error("grammar: rule '{}' is left-recursive (it can reach itself before reading a character) — rewrite "
                             "`a ::= a x | y` as `a ::= y x*`, and do not repeat what can be empty (`(x*)*`)", name);
    }

    Grammar flatten(uint32_t root) const {
        Grammar g;
        g.root = root;
        g.alternatives.resize(rules_.size());
        for (size_t r = 0; r < rules_.size(); ++r) {
            g.rule_names.push_back(rules_[r].name);
            for (const Sequence& seq : rules_[r].alternatives) {
                g.alternatives[r].push_back(static_cast<uint32_t>(g.elements.size()));
                for (const Item& it : seq) {
                    GrammarElement e;
                    if (it.is_rule) {
                        e.kind = GrammarElement::Kind::Rule;
                        e.rule = it.rule;
                    } else {
                        e.kind = GrammarElement::Kind::Chars;
                        e.negated = it.negated;
                        e.first = static_cast<uint32_t>(g.ranges.size());
                        e.count = static_cast<uint32_t>(it.ranges.size());
                        g.ranges.insert(g.ranges.end(), it.ranges.begin(), it.ranges.end());
                    }
                    g.elements.push_back(e);
                }
                g.elements.push_back(GrammarElement{});
            }
        }
        return g;
    }

    std::string_view text_;
    size_t pos_ = 0;
    std::vector<RuleDraft> rules_;
    std::map<std::string, uint32_t> names_;
    std::string current_ = "root";
    uint32_t generated_ = 0;
};

}  // namespace

bool Grammar::class_intersects(const GrammarElement& e, uint32_t lo, uint32_t hi) const {
    if (!e.negated) {
        for (uint32_t i = e.first; i < e.first + e.count; ++i) {
            if (ranges[i].lo <= hi && ranges[i].hi >= lo) return true;
        }
        return false;
    }
    // Negated: some code point of [lo, hi] lies outside every range. Walk the gaps.
    std::vector<CodePointRange> rs(ranges.begin() + e.first, ranges.begin() + e.first + e.count);
    std::sort(rs.begin(), rs.end(), [](const CodePointRange& a, const CodePointRange& b) { return a.lo < b.lo; });
    uint32_t next = lo;  // the lowest code point not yet known to be covered
    for (const CodePointRange& r : rs) {
        if (r.lo > next) break;
        if (r.hi >= next) {
            if (r.hi >= hi) return false;
            next = r.hi + 1;
        }
    }
    return next <= hi;
}

Result<Grammar> parse_grammar(std::string_view text, std::string_view root_rule) {
    return Parser(text).parse(root_rule);
}

std::string gbnf_literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02X}", static_cast<unsigned char>(c));
                else out += c;
        }
    }
    out += '"';
    return out;
}

}  // namespace strata
