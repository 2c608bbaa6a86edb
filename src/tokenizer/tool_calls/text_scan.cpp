#include "tokenizer/tool_calls/text_scan.h"

#include <algorithm>

namespace strata::tool_calls {

MarkerHit find_first_marker(std::string_view text, std::span<const std::string_view> markers) {
    MarkerHit best;
    for (size_t i = 0; i < markers.size(); ++i) {
        if (markers[i].empty()) continue;
        size_t pos = text.find(markers[i]);
        if (pos == kNpos) continue;
        if (pos < best.pos || (pos == best.pos && markers[i].size() > markers[best.index].size())) {
            best.pos = pos;
            best.index = i;
        }
    }
    return best;
}

size_t releasable_prefix(std::string_view text, std::span<const std::string_view> markers) {
    size_t keep = text.size();
    // The earliest start of a tail that a marker begins with; markers are short, so only the
    // last (longest marker - 1) bytes need checking.
    for (std::string_view m : markers) {
        if (m.size() < 2) continue;
        size_t longest = std::min(m.size() - 1, text.size());
        for (size_t len = longest; len > 0; --len) {
            if (text.substr(text.size() - len) == m.substr(0, len)) {
                keep = std::min(keep, text.size() - len);
                break;
            }
        }
    }
    return utf8_complete_prefix(text.substr(0, keep));
}

size_t releasable_prefix(std::string_view text, std::initializer_list<std::string_view> markers) {
    return releasable_prefix(text, std::span<const std::string_view>(markers.begin(), markers.size()));
}

size_t utf8_complete_prefix(std::string_view text) {
    // Walk back over at most 3 continuation bytes to the lead byte of the last character.
    size_t n = text.size();
    size_t back = 0;
    while (back < 4 && back < n && (static_cast<unsigned char>(text[n - 1 - back]) & 0xC0) == 0x80) ++back;
    if (back == n) return n;  // only continuation bytes: not UTF-8 we can fix by waiting
    unsigned char lead = static_cast<unsigned char>(text[n - 1 - back]);
    size_t need = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 1;
    if (back + 1 < need) return n - 1 - back;  // the last character is still incomplete
    return n;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

size_t JsonExtent::feed(std::string_view text) {
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        switch (state_) {
            case State::Complete:
            case State::Invalid: return i;
            case State::Before:
                if (is_space(c)) continue;
                if (c != '{' && c != '[') {
                    state_ = State::Invalid;
                    return i;
                }
                state_ = State::Inside;
                depth_ = 1;
                continue;
            case State::Inside:
                if (in_string_) {
                    if (escaped_) escaped_ = false;
                    else if (c == '\\') escaped_ = true;
                    else if (c == '"') in_string_ = false;
                } else if (c == '"') {
                    in_string_ = true;
                } else if (c == '{' || c == '[') {
                    ++depth_;
                } else if (c == '}' || c == ']') {
                    if (--depth_ == 0) {
                        state_ = State::Complete;
                        return i + 1;
                    }
                }
                continue;
        }
    }
    return text.size();
}

std::string TrimmedStream::push(std::string_view text) {
    if (!started_) {
        while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
        if (text.empty()) return {};
        started_ = true;
    }
    size_t body_end = text.size();
    while (body_end > 0 && is_space(text[body_end - 1])) --body_end;
    if (body_end == 0) {
        held_space_.append(text);
        return {};
    }
    std::string out = std::move(held_space_);
    out.append(text.substr(0, body_end));
    held_space_.assign(text.substr(body_end));
    return out;
}

}  // namespace strata::tool_calls
