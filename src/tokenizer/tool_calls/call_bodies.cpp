#include "tokenizer/tool_calls/call_bodies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "tokenizer/tool_calls/text_scan.h"

namespace strata::tool_calls {
namespace {

using Json = nlohmann::ordered_json;

std::optional<Json> try_parse_json(std::string_view text) {
    Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

// The parser's own message says where the JSON broke ("syntax error while parsing object -
// unexpected end of input; expected '}'"); a client or log reader needs exactly that.
std::string json_error(std::string_view text) {
    try {
        Json unused = Json::parse(text.begin(), text.end());
        (void)unused;
    } catch (const Json::exception& e) {
        return e.what();
    }
    return "not a JSON object";
}

std::string preview(std::string_view s) {
    constexpr size_t kMax = 60;
    if (s.size() <= kMax) return std::string(s);
    return std::string(s.substr(0, utf8_complete_prefix(s.substr(0, kMax)))) + "…";
}

// Arguments must end up an object. Some models write them as a JSON string holding the object;
// that is unwrapped. A missing value means no arguments.
bool normalize_arguments(Json& args, std::string& error) {
    if (args.is_null()) args = Json::object();
    if (args.is_string()) {
        std::string text = args.get<std::string>();
        std::optional<Json> inner = try_parse_json(text);
        if (!inner || !inner->is_object()) {
            error = fmt::format("arguments are a string that is not a JSON object: {}", preview(text));
            return false;
        }
        args = std::move(*inner);
    }
    if (!args.is_object()) {
        error = fmt::format("arguments must be a JSON object, got {}", preview(args.dump()));
        return false;
    }
    return true;
}

// {"name": f, "arguments"|"parameters": {…}, "id"?: s}
bool call_from_object(const Json& obj, ParsedCall& call, std::string& error) {
    if (!obj.is_object() || !obj.contains("name") || !obj["name"].is_string()) {
        error = "tool call JSON has no string \"name\"";
        return false;
    }
    call.name = obj["name"].get<std::string>();
    Json args = obj.contains("arguments") ? obj["arguments"] : obj.contains("parameters") ? obj["parameters"] : Json();
    if (!normalize_arguments(args, error)) return false;
    call.arguments = std::move(args);
    if (obj.contains("id") && obj["id"].is_string()) call.id = obj["id"].get<std::string>();
    return true;
}

BodyParse parse_json_object_call(std::string_view body) {
    BodyParse out;
    std::string_view text = trim(body);
    std::optional<Json> obj = try_parse_json(text);
    if (!obj) {
        out.error = "invalid JSON in tool call: " + json_error(text);
        return out;
    }
    ParsedCall call;
    if (!call_from_object(*obj, call, out.error)) return out;
    out.calls.push_back(std::move(call));
    return out;
}

BodyParse parse_json_call_array(std::string_view body) {
    BodyParse out;
    std::string_view text = trim(body);
    std::optional<Json> arr = try_parse_json(text);
    if (!arr) {
        out.error = "invalid JSON in tool calls: " + json_error(text);
        return out;
    }
    if (!arr->is_array()) {
        out.error = "tool calls must be a JSON array";
        return out;
    }
    for (const Json& item : *arr) {
        ParsedCall call;
        if (!call_from_object(item, call, out.error)) {
            out.calls.clear();
            return out;
        }
        out.calls.push_back(std::move(call));
    }
    return out;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// A bare-text parameter value as its schema type. The templates write non-strings as JSON
// (GLM, DSML) or with Python's str() (Qwen3-Coder: "False"), so both spellings are accepted.
// Without a schema, `json_when_untyped` decides between "JSON if it parses" (GLM, whose template
// writes every non-string as JSON) and "always a string" (Qwen3-Coder).
Json convert_value(std::string_view raw, const std::vector<std::string>& types, bool json_when_untyped,
                   std::string_view tool, std::string_view param, std::vector<std::string>& notes) {
    std::string_view text = trim(raw);
    if (types.empty()) {
        if (json_when_untyped) {
            if (std::optional<Json> j = try_parse_json(text)) return *j;
        }
        return Json(std::string(raw));
    }
    bool string_allowed = false;
    for (const std::string& t : types) {
        if (t == "string") {
            string_allowed = true;
        } else if (t == "integer") {
            long long v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return Json(v);
        } else if (t == "number") {
            std::optional<Json> j = try_parse_json(text);
            if (j && j->is_number()) return *j;
        } else if (t == "boolean") {
            std::string l = lower(text);
            if (l == "true" || l == "false") return Json(l == "true");
        } else if (t == "null") {
            if (text == "null" || text == "None") return Json();
        } else if (t == "object" || t == "array") {
            std::optional<Json> j = try_parse_json(text);
            if (j && (t == "object" ? j->is_object() : j->is_array())) return *j;
        }
    }
    if (string_allowed) return Json(std::string(raw));
    notes.push_back(fmt::format("tool {} parameter {}: expected {}, got \"{}\"; passed as a string", tool,
                                param, fmt::join(types, "|"), preview(text)));
    return Json(std::string(raw));
}

// Text between `open` at or after `from` and the next `close`; `from` moves past `close`.
std::optional<std::string_view> take_between(std::string_view s, std::string_view open, std::string_view close,
                                             size_t& from) {
    size_t a = s.find(open, from);
    if (a == kNpos) return std::nullopt;
    a += open.size();
    size_t b = s.find(close, a);
    if (b == kNpos) return std::nullopt;
    from = b + close.size();
    return s.substr(a, b - a);
}

std::string_view strip_one_newline(std::string_view v) {
    if (starts_with(v, "\n")) v.remove_prefix(1);
    if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
    return v;
}

// <function=f>\n<parameter=p>\nvalue\n</parameter>\n…</function>
BodyParse parse_qwen_xml(std::string_view body, const ToolSchemas& schemas) {
    BodyParse out;
    constexpr std::string_view kFn = "<function=", kParam = "<parameter=", kParamEnd = "</parameter>",
                               kFnEnd = "</function>";
    size_t fn = body.find(kFn);
    size_t name_end = fn == kNpos ? kNpos : body.find('>', fn);
    if (name_end == kNpos) {
        out.error = fmt::format("tool call has no <function=name>: {}", preview(trim(body)));
        return out;
    }
    ParsedCall call;
    call.name = std::string(trim(body.substr(fn + kFn.size(), name_end - fn - kFn.size())));
    call.arguments = Json::object();
    size_t cur = name_end + 1;
    size_t fn_end = body.find(kFnEnd, cur);
    std::string_view inner = body.substr(cur, fn_end == kNpos ? kNpos : fn_end - cur);
    size_t p = 0;
    while ((p = inner.find(kParam, p)) != kNpos) {
        size_t pname_end = inner.find('>', p);
        if (pname_end == kNpos) break;
        std::string pname(trim(inner.substr(p + kParam.size(), pname_end - p - kParam.size())));
        size_t vstart = pname_end + 1;
        // A missing </parameter> is tolerated: the value then ends at the next parameter.
        size_t vend = inner.find(kParamEnd, vstart);
        size_t next = inner.find(kParam, vstart);
        size_t after = vend == kNpos ? next : vend + kParamEnd.size();
        if (vend == kNpos || (next != kNpos && next < vend)) {
            vend = next == kNpos ? inner.size() : next;
            after = vend;
        }
        std::string_view value = strip_one_newline(inner.substr(vstart, vend - vstart));
        call.arguments[pname] =
            convert_value(value, schemas.param_types(call.name, pname), false, call.name, pname, out.notes);
        p = after;
    }
    out.calls.push_back(std::move(call));
    return out;
}

// f\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>…
BodyParse parse_glm_xml(std::string_view body, const ToolSchemas& schemas) {
    BodyParse out;
    size_t first_key = body.find("<arg_key>");
    std::string_view name = trim(body.substr(0, first_key));
    if (name.empty() || name.find_first_of("<>{}\n") != kNpos) {
        out.error = fmt::format("tool call has no function name: {}", preview(trim(body)));
        return out;
    }
    ParsedCall call;
    call.name = std::string(name);
    call.arguments = Json::object();
    size_t from = first_key == kNpos ? body.size() : first_key;
    while (std::optional<std::string_view> key = take_between(body, "<arg_key>", "</arg_key>", from)) {
        std::optional<std::string_view> value = take_between(body, "<arg_value>", "</arg_value>", from);
        if (!value) {
            out.error = fmt::format("tool call {}: <arg_key>{}</arg_key> has no <arg_value>", call.name, *key);
            return out;
        }
        std::string k(trim(*key));
        call.arguments[k] = convert_value(*value, schemas.param_types(call.name, k), true, call.name, k, out.notes);
    }
    out.calls.push_back(std::move(call));
    return out;
}

// R1: function<｜tool▁sep｜>f\n```json\n{…}\n```   V3.1: f<｜tool▁sep｜>{…}
BodyParse parse_deepseek(std::string_view body) {
    BodyParse out;
    constexpr std::string_view kSep = "<｜tool▁sep｜>";
    size_t sep = body.find(kSep);
    if (sep == kNpos) {
        out.error = fmt::format("tool call has no <｜tool▁sep｜>: {}", preview(trim(body)));
        return out;
    }
    std::string_view left = trim(body.substr(0, sep));
    std::string_view right = body.substr(sep + kSep.size());
    ParsedCall call;
    std::string_view args = right;
    if (left == "function") {  // R1 writes the call type first, the name after the separator
        size_t nl = right.find('\n');
        call.name = std::string(trim(right.substr(0, nl)));
        args = nl == kNpos ? std::string_view() : trim(right.substr(nl + 1));
        if (starts_with(args, "```json")) args.remove_prefix(7);
        else if (starts_with(args, "```")) args.remove_prefix(3);
        args = trim(args);
        if (args.size() >= 3 && args.substr(args.size() - 3) == "```") args.remove_suffix(3);
    } else {
        call.name = std::string(left);
    }
    args = trim(args);
    std::optional<Json> j = try_parse_json(args);
    if (!j) {
        out.error = fmt::format("tool call {}: invalid JSON arguments: {}", call.name, json_error(args));
        return out;
    }
    if (!normalize_arguments(*j, out.error)) return out;
    call.arguments = std::move(*j);
    out.calls.push_back(std::move(call));
    return out;
}

// ` name="f">\n<｜DSML｜parameter name="p" string="true">v</｜DSML｜parameter>\n`
BodyParse parse_dsml(std::string_view body, const ToolSchemas& schemas) {
    BodyParse out;
    size_t from = 0;
    std::optional<std::string_view> name = take_between(body, "name=\"", "\"", from);
    if (!name) {
        out.error = fmt::format("tool call has no name=\"…\": {}", preview(trim(body)));
        return out;
    }
    ParsedCall call;
    call.name = std::string(*name);
    call.arguments = Json::object();
    constexpr std::string_view kParam = "<｜DSML｜parameter", kParamEnd = "</｜DSML｜parameter>";
    size_t p = from;
    while ((p = body.find(kParam, p)) != kNpos) {
        size_t tag_end = body.find('>', p);
        size_t vend = tag_end == kNpos ? kNpos : body.find(kParamEnd, tag_end);
        if (vend == kNpos) {
            out.error = fmt::format("tool call {}: unterminated parameter", call.name);
            return out;
        }
        std::string_view tag = body.substr(p, tag_end - p);
        size_t at = 0;
        std::string pname(take_between(tag, "name=\"", "\"", at).value_or(""));
        std::string_view value = body.substr(tag_end + 1, vend - tag_end - 1);
        if (tag.find("string=\"true\"") != kNpos) {
            call.arguments[pname] = std::string(value);
        } else if (tag.find("string=\"false\"") != kNpos) {
            std::optional<Json> j = try_parse_json(value);
            if (j) call.arguments[pname] = *j;
            else call.arguments[pname] = convert_value(value, schemas.param_types(call.name, pname), true,
                                                       call.name, pname, out.notes);
        } else {
            call.arguments[pname] =
                convert_value(value, schemas.param_types(call.name, pname), true, call.name, pname, out.notes);
        }
        p = vend + kParamEnd.size();
    }
    out.calls.push_back(std::move(call));
    return out;
}

// [{…}, …]  or  f[ARGS]{…}  or  f[CALL_ID]id[ARGS]{…}
BodyParse parse_mistral(std::string_view body) {
    std::string_view text = trim(body);
    if (starts_with(text, "[")) return parse_json_call_array(text);
    BodyParse out;
    size_t args_at = text.find("[ARGS]");
    if (args_at == kNpos) {
        out.error = fmt::format("[TOOL_CALLS] without [ARGS]: {}", preview(text));
        return out;
    }
    ParsedCall call;
    std::string_view head = text.substr(0, args_at);
    if (size_t id_at = head.find("[CALL_ID]"); id_at != kNpos) {
        call.id = std::string(trim(head.substr(id_at + 9)));
        head = head.substr(0, id_at);
    }
    call.name = std::string(trim(head));
    std::string_view args = trim(text.substr(args_at + 6));
    std::optional<Json> j = try_parse_json(args);
    if (!j) {
        out.error = fmt::format("tool call {}: invalid JSON arguments: {}", call.name, json_error(args));
        return out;
    }
    if (!normalize_arguments(*j, out.error)) return out;
    call.arguments = std::move(*j);
    out.calls.push_back(std::move(call));
    return out;
}

// A JSON object at the start of a Llama answer is a call only if it has the call's shape;
// otherwise the model simply answered in JSON.
BodyParse parse_llama_json(std::string_view body) {
    BodyParse out;
    std::string_view text = trim(body);
    std::optional<Json> obj = try_parse_json(text);
    bool shaped = obj && obj->is_object() && obj->contains("name") &&
                  (obj->contains("parameters") || obj->contains("arguments"));
    if (!shaped) {
        // Broken JSON that began like a call is a malformed call; anything else is an answer.
        std::string compact;
        for (char c : text.substr(0, 16)) if (!is_space(c)) compact += c;
        if (!obj && starts_with(compact, "{\"name\"")) {
            out.error = "invalid JSON in tool call: " + json_error(text);
        } else {
            out.not_a_call = true;
        }
        return out;
    }
    ParsedCall call;
    if (call_from_object(*obj, call, out.error)) out.calls.push_back(std::move(call));
    return out;
}

// brave_search.call(query="x", count=3) -> {"query": "x", "count": 3}
std::optional<Json> parse_python_kwargs(std::string_view s) {
    Json args = Json::object();
    size_t i = 0;
    auto skip = [&] { while (i < s.size() && (is_space(s[i]) || s[i] == ',')) ++i; };
    for (skip(); i < s.size(); skip()) {
        size_t k = i;
        while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
        if (i == k || i >= s.size() || s[i] != '=') return std::nullopt;
        std::string key(s.substr(k, i - k));
        ++i;
        if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
            char q = s[i++];
            std::string v;
            while (i < s.size() && s[i] != q) {
                if (s[i] == '\\' && i + 1 < s.size()) ++i;
                v += s[i++];
            }
            if (i >= s.size()) return std::nullopt;
            ++i;
            args[key] = v;
        } else {
            size_t v = i;
            while (i < s.size() && s[i] != ',') ++i;
            std::string_view raw = trim(s.substr(v, i - v));
            std::optional<Json> j = try_parse_json(raw);
            args[key] = j ? *j : Json(std::string(raw));
        }
    }
    return args;
}

BodyParse parse_python_tag(std::string_view body) {
    std::string_view text = trim(body);
    if (starts_with(text, "{")) {
        BodyParse out = parse_llama_json(text);
        if (out.not_a_call) {
            out.not_a_call = false;
            out.error = "<|python_tag|> JSON is not a {\"name\", \"parameters\"} call";
        }
        return out;
    }
    BodyParse out;
    ParsedCall call;
    size_t dot = text.find(".call(");
    bool ident = dot != kNpos && dot > 0 &&
                 std::all_of(text.begin(), text.begin() + static_cast<long>(dot), [](char c) {
                     return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                 });
    if (ident && text.back() == ')') {
        std::optional<Json> args = parse_python_kwargs(text.substr(dot + 6, text.size() - dot - 7));
        if (args) {
            call.name = std::string(text.substr(0, dot));
            call.arguments = std::move(*args);
            out.calls.push_back(std::move(call));
            return out;
        }
    }
    // Anything else after <|python_tag|> is code for the code_interpreter built-in; llama.cpp
    // names that call "python" with {"code": …}, and clients written against it expect that.
    call.name = "python";
    call.arguments = Json{{"code", std::string(text)}};
    out.calls.push_back(std::move(call));
    return out;
}

}  // namespace

ToolSchemas::ToolSchemas(const nlohmann::ordered_json& tools) {
    if (!tools.is_array()) return;
    for (const auto& tool : tools) {
        const auto& fn = tool.contains("function") ? tool["function"] : tool;
        if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
        auto& params = types_[fn["name"].get<std::string>()];
        if (!fn.contains("parameters") || !fn["parameters"].is_object()) continue;
        const auto& params_schema = fn["parameters"];
        if (!params_schema.contains("properties") || !params_schema["properties"].is_object()) continue;
        for (const auto& [pname, pschema] : params_schema["properties"].items()) {
            std::vector<std::string>& types = params[pname];
            if (!pschema.is_object() || !pschema.contains("type")) continue;
            const auto& t = pschema["type"];
            if (t.is_string()) types.push_back(t.get<std::string>());
            if (t.is_array()) {
                for (const auto& x : t) if (x.is_string()) types.push_back(x.get<std::string>());
            }
        }
    }
}

std::vector<std::string> ToolSchemas::param_types(std::string_view tool, std::string_view param) const {
    auto t = types_.find(tool);
    if (t == types_.end()) return {};
    auto p = t->second.find(param);
    return p == t->second.end() ? std::vector<std::string>{} : p->second;
}

BodyParse parse_call_body(BodyKind kind, std::string_view body, const ToolSchemas& schemas) {
    switch (kind) {
        case BodyKind::HermesJson: return parse_json_object_call(body);
        case BodyKind::QwenXml: return parse_qwen_xml(body, schemas);
        case BodyKind::GlmXml: return parse_glm_xml(body, schemas);
        case BodyKind::DeepSeek: return parse_deepseek(body);
        case BodyKind::Dsml: return parse_dsml(body, schemas);
        case BodyKind::MistralCalls: return parse_mistral(body);
        case BodyKind::JsonCallArray: return parse_json_call_array(body);
        case BodyKind::LlamaJson: return parse_llama_json(body);
        case BodyKind::PythonTag: return parse_python_tag(body);
    }
    BodyParse out;
    out.error = "unknown call body kind";
    return out;
}

BodyParse parse_named_json_call(std::string name, std::string_view arguments) {
    BodyParse out;
    std::string_view text = trim(arguments);
    std::optional<Json> j = text.empty() ? std::optional<Json>(Json::object()) : try_parse_json(text);
    if (!j) {
        out.error = fmt::format("tool call {}: invalid JSON arguments: {}", name, json_error(text));
        return out;
    }
    if (!normalize_arguments(*j, out.error)) return out;
    out.calls.push_back(ParsedCall{std::move(name), std::move(*j), {}});
    return out;
}

size_t json_value_start(BodyKind kind, std::string_view body) {
    size_t first = 0;
    while (first < body.size() && is_space(body[first])) ++first;
    if (first == body.size()) return kNpos;
    if (kind == BodyKind::MistralCalls && body[first] != '[') {
        size_t args = body.find("[ARGS]");
        return args == kNpos ? kNpos : args + 6;
    }
    // JsonExtent reports anything but '{' or '[' here as invalid.
    return first;
}

}  // namespace strata::tool_calls
