#pragma once
// Small text tools for parsing a model's output while it streams: finding markers, deciding how
// much text can be released without cutting a marker (or a UTF-8 character) in two, finding where
// a JSON value ends, and trimming a stream's outer whitespace without ever retracting text.
//
//   size_t n = releasable_prefix(pending, {"<tool_call>"});  // "Hi <tool" -> 3
//   JsonExtent j; size_t used = j.feed("{\"a\": [1]} tail");    // j.complete(), used == 10

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace strata::tool_calls {

constexpr size_t kNpos = std::string_view::npos;

struct MarkerHit {
    size_t pos = kNpos;  // kNpos when no marker occurs in full
    size_t index = 0;    // which marker
};

// The earliest complete marker in `text`; on a tie the longest marker wins.
MarkerHit find_first_marker(std::string_view text, std::span<const std::string_view> markers);

// How much of `text` can be released now: all of it except a tail that is a proper prefix of
// some marker (it could still become that marker), cut back to a whole UTF-8 character so a
// delta is always valid UTF-8 on its own.
size_t releasable_prefix(std::string_view text, std::span<const std::string_view> markers);
size_t releasable_prefix(std::string_view text, std::initializer_list<std::string_view> markers);

// Length of the longest prefix of `text` that does not end inside a UTF-8 sequence.
size_t utf8_complete_prefix(std::string_view text);

bool is_space(char c);
std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

// Finds where a JSON object or array that starts in a stream ends, without parsing it: tracks
// nesting depth and strings. Whether the value is valid JSON is decided later by a real parse.
class JsonExtent {
public:
    // Consumes text; returns how many bytes were used. When the value closes, the bytes after
    // it are not consumed and complete() becomes true. Leading whitespace is skipped; any other
    // first character than '{' or '[' makes the extent invalid().
    size_t feed(std::string_view text);
    bool complete() const { return state_ == State::Complete; }
    bool invalid() const { return state_ == State::Invalid; }

private:
    enum class State { Before, Inside, Complete, Invalid };
    State state_ = State::Before;
    int depth_ = 0;
    bool in_string_ = false;
    bool escaped_ = false;
};

// One output stream (content or reasoning_content). Leading whitespace of the stream is dropped,
// and trailing whitespace is held until more text follows, so the stream never needs to be
// trimmed after the fact: what was emitted is final.
class TrimmedStream {
public:
    // Returns the text to emit now.
    std::string push(std::string_view text);

private:
    bool started_ = false;
    std::string held_space_;
};

}  // namespace strata::tool_calls
