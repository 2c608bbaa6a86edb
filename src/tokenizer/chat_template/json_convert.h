#pragma once
// JSON in and out of the interpreter. Render variables arrive as nlohmann::ordered_json (key
// order matters: it shows in tojson and items()). `tojson` is transformers' filter, which is
// plain Python json.dumps, so the writer follows json.dumps byte for byte.
//
//   Value v = value_from_json(nlohmann::ordered_json::parse(R"({"a": [1, 2.0]})"));
//   python_json_dumps(v, {});            // {"a": [1, 2.0]}
//   python_json_dumps(v, {.indent = 2}); // newlines and two-space indentation

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "tokenizer/chat_template/value.h"

namespace strata::chat_template {

// Objects become insertion-ordered dicts; integers stay ints and numbers with '.' or an
// exponent become floats, as Python's json.loads does.
Value value_from_json(const nlohmann::ordered_json& json);

struct JsonDumpOptions {
    bool ensure_ascii = false;        // transformers passes False: non-ASCII stays raw UTF-8
    std::optional<int> indent;        // none: one line with ", " and ": "
    std::optional<std::string> item_separator;  // json.dumps separators=(item, key)
    std::optional<std::string> key_separator;
    bool sort_keys = false;
};

// Python json.dumps; raises TypeError "Object of type X is not JSON serializable".
std::string python_json_dumps(const Value& v, const JsonDumpOptions& options);

}  // namespace strata::chat_template
