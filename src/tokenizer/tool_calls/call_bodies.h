#pragma once
// Turns the text of one complete call block (what lies between a family's call markers) into
// calls: a name, arguments as a JSON object, and the id the model wrote if it writes one. XML-style
// families write parameter values as bare text; those are converted by the type the request's
// tool JSON schema gives the parameter (ToolSchemas).
//
//   ToolSchemas schemas(request["tools"]);
//   BodyParse p = parse_call_body(BodyKind::QwenXml, "<function=f>\n<parameter=n>\n3\n</parameter>\n</function>", schemas);
//   // p.calls[0].name == "f", p.calls[0].arguments == {"n": 3} when the schema says n is an integer

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tool_calls/chat_format.h"

namespace strata::tool_calls {

struct ParsedCall {
    std::string name;
    nlohmann::ordered_json arguments;  // always an object
    std::string id;                    // as the model wrote it; empty for most families
};

struct BodyParse {
    std::vector<ParsedCall> calls;
    std::string error;               // non-empty: the block is malformed and is not a call
    bool not_a_call = false;         // well-formed text that is no call (a Llama JSON answer)
    std::vector<std::string> notes;  // accepted with a caveat (a value not of its schema type)
};

// Parameter types from the request's OpenAI `tools` array:
// [{"type": "function", "function": {"name": f, "parameters": {"properties": {p: {"type": t}}}}}].
class ToolSchemas {
public:
    ToolSchemas() = default;
    explicit ToolSchemas(const nlohmann::ordered_json& tools);
    // The schema "type" names of a parameter ("type" may be a string or a list); empty if unknown.
    std::vector<std::string> param_types(std::string_view tool, std::string_view param) const;

private:
    std::map<std::string, std::map<std::string, std::vector<std::string>, std::less<>>, std::less<>> types_;
};

BodyParse parse_call_body(BodyKind kind, std::string_view body, const ToolSchemas& schemas);

// A call whose name is already known (gpt-oss puts it in the channel header) and whose body is
// its JSON arguments.
BodyParse parse_named_json_call(std::string name, std::string_view arguments);

// For blocks that end where their JSON value closes: the offset in `body` where that value
// starts, or kNpos while too little of the body has arrived to tell.
size_t json_value_start(BodyKind kind, std::string_view body);

}  // namespace strata::tool_calls
