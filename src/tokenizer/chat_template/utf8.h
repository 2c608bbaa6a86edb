#pragma once
// Code-point helpers: Python strings index, slice, strip and measure by code point, while the
// interpreter stores UTF-8 bytes. Malformed bytes decode as U+FFFD so rendering never aborts.
//
//   std::u32string cps = utf8_decode("héllo");   // 5 code points
//   utf8_encode(cps.substr(1, 2));               // "él"

#include <string>
#include <string_view>

namespace strata::chat_template {

std::u32string utf8_decode(std::string_view s);
std::string utf8_encode(std::u32string_view s);
void utf8_append(std::string& out, char32_t cp);
size_t utf8_length(std::string_view s);

// Python str.isspace() for one code point (what str.strip() and str.split() remove).
bool is_python_space(char32_t cp);
// Python str.isprintable() for one code point, approximated by the ranges that matter for repr
// of chat text: C0/C1 controls, DEL, the non-ASCII spaces and the format characters.
bool is_python_printable(char32_t cp);

// Python str.strip/lstrip/rstrip: with `chars` null, strip whitespace; else strip those code points.
std::string python_strip(std::string_view s, const std::u32string* chars, bool left, bool right);

}  // namespace strata::chat_template
