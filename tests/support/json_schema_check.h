#pragma once
// A JSON Schema checker for the tests of constrained output (the validator libraries are not
// packaged in Debian). It covers the keywords the grammar converter accepts
// (runtime/json_schema_grammar.h): type, properties, required, additionalProperties, items,
// minItems, maxItems, enum, const, minLength, maxLength (in code points), anyOf, oneOf, allOf,
// $ref to #/$defs or #/definitions. It returns the first violation, or "" when the value holds.
//
//   std::string why = test::schema_violation(schema, nlohmann::json::parse(output));

#include <nlohmann/json.hpp>

#include <string>

namespace strata::test {

namespace detail {

inline size_t code_points(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

inline bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_number_integer() || (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>())));
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
}

inline std::string check(const nlohmann::json& root, const nlohmann::json& s, const nlohmann::json& v, const std::string& path,
                         bool strict) {
    if (s.is_boolean()) return s.get<bool>() ? "" : path + ": schema false";
    if (s.contains("$ref")) {
        const std::string r = s["$ref"];
        for (const char* base : {"#/$defs/", "#/definitions/"}) {
            const std::string b = base;
            if (r.rfind(b, 0) == 0) return check(root, root[b.substr(2, b.size() - 3)][r.substr(b.size())], v, path, strict);
        }
        return r == "#" ? check(root, root, v, path, strict) : path + ": unknown $ref " + r;
    }
    if (s.contains("const") && s["const"] != v) return path + ": expected const " + s["const"].dump();
    if (s.contains("enum")) {
        bool found = false;
        for (const auto& e : s["enum"]) found = found || e == v;
        if (!found) return path + ": not in enum " + s["enum"].dump();
    }
    if (s.contains("anyOf") || s.contains("oneOf")) {
        const auto& alts = s.contains("anyOf") ? s["anyOf"] : s["oneOf"];
        int ok = 0;
        for (const auto& a : alts) ok += check(root, a, v, path, strict).empty();
        if (ok == 0) return path + ": matches no alternative";
        if (s.contains("oneOf") && ok > 1) return path + ": matches several oneOf alternatives";
    }
    if (s.contains("allOf")) {
        for (const auto& a : s["allOf"]) {
            if (auto why = check(root, a, v, path, strict); !why.empty()) return why;
        }
    }
    if (s.contains("type")) {
        const auto& t = s["type"];
        bool ok = false;
        if (t.is_string()) ok = has_type(v, t);
        for (const auto& one : t.is_array() ? t : nlohmann::json::array()) ok = ok || has_type(v, one);
        if (!ok) return path + ": expected type " + t.dump() + ", got " + v.dump();
    }
    if (v.is_object() && (s.contains("properties") || s.contains("required") || s.contains("additionalProperties"))) {
        const auto props = s.value("properties", nlohmann::json::object());
        for (const auto& r : s.value("required", nlohmann::json::array())) {
            if (!v.contains(r.get<std::string>())) return path + ": missing required " + r.dump();
        }
        const auto additional = s.value("additionalProperties", strict ? nlohmann::json(false) : nlohmann::json(true));
        for (const auto& [k, member] : v.items()) {
            if (props.contains(k)) {
                if (auto why = check(root, props[k], member, path + "." + k, strict); !why.empty()) return why;
            } else if (additional.is_boolean() && !additional.get<bool>()) {
                return path + ": unexpected member " + k;
            } else if (auto why = check(root, additional, member, path + "." + k, strict); !why.empty()) {
                return why;
            }
        }
    }
    if (v.is_array()) {
        if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return path + ": fewer than minItems";
        if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return path + ": more than maxItems";
        if (s.contains("items")) {
            for (size_t i = 0; i < v.size(); ++i) {
                if (auto why = check(root, s["items"], v[i], path + "[" + std::to_string(i) + "]", strict); !why.empty()) return why;
            }
        }
    }
    if (v.is_string()) {
        const size_t n = code_points(v.get<std::string>());
        if (s.contains("minLength") && n < s["minLength"].get<size_t>()) return path + ": shorter than minLength";
        if (s.contains("maxLength") && n > s["maxLength"].get<size_t>()) return path + ": longer than maxLength";
    }
    return "";
}

}  // namespace detail

// `strict`: an object schema without additionalProperties allows no other member (OpenAI's strict mode).
inline std::string schema_violation(const nlohmann::json& schema, const nlohmann::json& value, bool strict = true) {
    return detail::check(schema, schema, value, "$", strict);
}

}  // namespace strata::test
