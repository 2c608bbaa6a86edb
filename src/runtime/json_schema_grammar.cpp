#include "runtime/json_schema_grammar.h"

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <set>

#include "runtime/grammar.h"

namespace strata {

namespace {

using json = nlohmann::ordered_json;

// Shared by every schema grammar. `json-string` is any JSON string, `json-value` any value.
constexpr const char* kPrimitives =
    "ws ::= [ \\t\\n]{0,4}\n"
    "json-char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n"
    "json-string ::= \"\\\"\" json-char* \"\\\"\"\n"
    "json-integer ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,15} )\n"
    "json-number ::= json-integer ( \".\" [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?\n"
    "json-boolean ::= \"true\" | \"false\"\n"
    "json-null ::= \"null\"\n"
    "json-member ::= json-string ws \":\" ws json-value\n"
    "json-object ::= \"{\" ws ( json-member ws ( \",\" ws json-member ws )* )? \"}\"\n"
    "json-array ::= \"[\" ws ( json-value ws ( \",\" ws json-value ws )* )? \"]\"\n"
    "json-value ::= json-object | json-array | json-string | json-number | json-boolean | json-null\n";

std::string shown(const json& j) {
    std::string s = j.dump();
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

class Converter {
public:
    Converter(const json& root, const JsonSchemaGrammarOptions& options, std::string prefix)
        : root_(root), options_(options), prefix_(std::move(prefix)) {}

    Result<std::string> convert() { return visit(root_, prefix_ + "value", "#"); }
    const std::string& rules() const { return rules_; }

private:
    // Adds `name ::= body` and returns the name (made unique).
    std::string add_rule(const std::string& hint, const std::string& body) {
        std::string name;
        for (char c : hint) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
        if (name.empty()) name = prefix_ + "r";
        std::string unique = name;
        for (int i = 2; used_.count(unique); ++i) unique = fmt::format("{}{}", name, i);
        used_.insert(unique);
        rules_ += unique + " ::= " + body + "\n";
        return unique;
    }

    Status unsupported(const std::string& path, const std::string& what) const {
        return Status::error("json schema at {}: {} is not supported — remove it or describe the value with type, enum, "
                             "properties, items and anyOf", path, what);
    }

    // The rule (or a GBNF expression) of `schema`'s values; `hint` names the rules made for it.
    Result<std::string> visit(const json& schema, const std::string& hint, const std::string& path) {
        if (schema.is_boolean()) {
            if (schema.get<bool>()) return std::string("json-value");
            return Status::error("json schema at {}: false admits no value — remove it or use a schema that admits one", path);
        }
        if (!schema.is_object()) return Status::error("json schema at {}: expected an object or a boolean, got {} — fix the schema", path, shown(schema));
        for (const char* key : {"pattern", "patternProperties", "not", "if", "then", "else", "dependentSchemas"}) {
            if (schema.contains(key)) return unsupported(path, std::string("\"") + key + "\"");
        }
        if (auto it = schema.find("$ref"); it != schema.end()) return visit_ref(*it, path);
        if (auto it = schema.find("const"); it != schema.end()) return gbnf_literal(it->dump());
        if (auto it = schema.find("enum"); it != schema.end()) {
            if (!it->is_array() || it->empty()) return Status::error("json schema at {}/enum: expected a non-empty list, got {} — list the allowed values", path, shown(*it));
            std::string body;
            for (const json& v : *it) body += (body.empty() ? "" : " | ") + gbnf_literal(v.dump());
            return add_rule(hint, body);
        }
        for (const char* key : {"anyOf", "oneOf"}) {
            if (auto it = schema.find(key); it != schema.end()) {
                if (!it->is_array() || it->empty()) return Status::error("json schema at {}/{}: expected a non-empty list, got {} — list the alternatives", path, key, shown(*it));
                std::string body;
                for (size_t i = 0; i < it->size(); ++i) {
                    json alt = (*it)[i];
                    // Sibling keywords (a shared "type", "properties") apply to every alternative.
                    if (alt.is_object()) {
                        for (auto& [k, v] : schema.items()) {
                            if (k != key && !alt.contains(k)) alt[k] = v;
                        }
                    }
                    STRATA_ASSIGN_OR_RETURN(std::string r, visit(alt, fmt::format("{}-{}", hint, i), fmt::format("{}/{}/{}", path, key, i)));
                    body += (body.empty() ? "" : " | ") + r;
                }
                return add_rule(hint, body);
            }
        }
        if (auto it = schema.find("allOf"); it != schema.end()) return visit_all_of(schema, *it, hint, path);

        json type = schema.value("type", json());
        if (type.is_null()) {
            if (schema.contains("properties") || schema.contains("additionalProperties") || schema.contains("required")) type = "object";
            else if (schema.contains("items") || schema.contains("minItems") || schema.contains("maxItems")) type = "array";
            else return std::string("json-value");
        }
        if (type.is_array()) {
            std::string body;
            for (const json& t : type) {
                json one = schema;
                one["type"] = t;
                STRATA_ASSIGN_OR_RETURN(std::string r, visit(one, hint + "-" + t.get<std::string>(), path));
                body += (body.empty() ? "" : " | ") + r;
            }
            if (body.empty()) return Status::error("json schema at {}/type: expected a type or a non-empty list, got [] — name a type", path);
            return add_rule(hint, body);
        }
        if (!type.is_string()) return Status::error("json schema at {}/type: expected a string or a list, got {} — name a type", path, shown(type));
        const std::string t = type.get<std::string>();
        if (t == "object") return visit_object(schema, hint, path);
        if (t == "array") return visit_array(schema, hint, path);
        if (t == "string") return visit_string(schema, hint, path);
        if (t == "integer") return std::string("json-integer");
        if (t == "number") return std::string("json-number");
        if (t == "boolean") return std::string("json-boolean");
        if (t == "null") return std::string("json-null");
        return Status::error("json schema at {}/type: expected object, array, string, integer, number, boolean or null, got \"{}\" — fix the type", path, t);
    }

    Result<std::string> visit_ref(const json& ref, const std::string& path) {
        if (!ref.is_string()) return Status::error("json schema at {}/$ref: expected a string, got {} — write \"#/$defs/Name\"", path, shown(ref));
        const std::string r = ref.get<std::string>();
        if (auto it = refs_.find(r); it != refs_.end()) return it->second;
        const json* target = r == "#" ? &root_ : find_definition(r);
        if (!target) return Status::error("json schema at {}/$ref: expected a reference to #/$defs/NAME or #/definitions/NAME of this schema, got \"{}\" — inline the definition", path, r);
        // Named before it is converted, so a recursive reference finds the rule.
        std::string name;
        for (char c : prefix_ + "ref-" + r.substr(r.rfind('/') + 1)) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
        for (int i = 2; used_.count(name); ++i) name += std::to_string(i);
        used_.insert(name);
        refs_[r] = name;
        STRATA_ASSIGN_OR_RETURN(std::string body, visit(*target, name + "-def", path + "/$ref"));
        rules_ += name + " ::= " + body + "\n";
        return name;
    }

    // The schema at "#/$defs/NAME" or "#/definitions/NAME" of the document, or null.
    const json* find_definition(const std::string& ref) const {
        for (const std::string base : {"$defs", "definitions"}) {
            const std::string prefix = "#/" + base + "/";
            if (ref.rfind(prefix, 0) != 0) continue;
            auto defs = root_.find(base);
            if (defs == root_.end() || !defs->is_object()) return nullptr;
            auto it = defs->find(ref.substr(prefix.size()));
            return it == defs->end() ? nullptr : &*it;
        }
        return nullptr;
    }

    Result<std::string> visit_all_of(const json& schema, const json& parts, const std::string& hint, const std::string& path) {
        if (!parts.is_array()) return Status::error("json schema at {}/allOf: expected a list, got {} — list the schemas", path, shown(parts));
        json merged = schema;
        merged.erase("allOf");
        for (const json& p0 : parts) {
            json p = p0;
            if (p.is_object() && p.contains("$ref") && p["$ref"].is_string()) {
                // Resolve one level so the members can be merged.
                if (const json* def = find_definition(p["$ref"].get<std::string>())) p = *def;
            }
            if (!p.is_object() || p.contains("$ref") || p.contains("anyOf") || p.contains("oneOf")) {
                return unsupported(path + "/allOf", "a part that is not a plain schema");
            }
            for (auto& [k, v] : p.items()) {
                if (k == "properties" && merged.contains("properties")) merged["properties"].update(v);
                else if (k == "required" && merged.contains("required")) for (const json& n : v) merged["required"].push_back(n);
                else merged[k] = v;
            }
        }
        return visit(merged, hint, path);
    }

    Result<std::string> visit_object(const json& schema, const std::string& hint, const std::string& path) {
        const json props = schema.value("properties", json::object());
        if (!props.is_object()) return Status::error("json schema at {}/properties: expected an object, got {} — map names to schemas", path, shown(props));
        std::set<std::string> required;
        if (auto it = schema.find("required"); it != schema.end() && it->is_array()) {
            for (const json& n : *it) {
                if (n.is_string()) required.insert(n.get<std::string>());
            }
        }
        // Extra members: none when additionalProperties is false (or absent, in strict mode).
        json additional = schema.value("additionalProperties", options_.strict ? json(false) : json(true));
        const bool extras = !(additional.is_boolean() && !additional.get<bool>());
        if (props.empty()) {
            if (!extras) return add_rule(hint, "\"{\" ws \"}\"");
            STRATA_ASSIGN_OR_RETURN(std::string v, visit(additional, hint + "-additional", path + "/additionalProperties"));
            const std::string member = add_rule(hint + "-kv", "json-string ws \":\" ws " + v);
            return add_rule(hint, "\"{\" ws ( " + member + " ws ( \",\" ws " + member + " ws )* )? \"}\"");
        }
        struct Member {
            std::string rule;
            bool required;
        };
        std::vector<Member> members;
        for (auto& [name, sub] : props.items()) {
            STRATA_ASSIGN_OR_RETURN(std::string v, visit(sub, hint + "-" + name, path + "/properties/" + name));
            const std::string kv = add_rule(hint + "-" + name + "-kv", gbnf_literal(json(name).dump()) + " ws \":\" ws " + v);
            members.push_back({kv, required.count(name) > 0});
        }
        // After a member was written: rest_i, each of members i.. with a leading comma.
        std::string extra_tail;
        bool any_required = false;
        for (const Member& m : members) any_required = any_required || m.required;
        if (extras && any_required) {
            STRATA_ASSIGN_OR_RETURN(std::string v, visit(additional, hint + "-additional", path + "/additionalProperties"));
            extra_tail = add_rule(hint + "-extra", "( \",\" ws json-string ws \":\" ws " + v + " ws )*");
        }
        const size_t n = members.size();
        std::vector<std::string> rest(n + 1), first(n + 1);
        rest[n] = extra_tail.empty() ? "" : extra_tail;
        for (size_t i = n; i-- > 0;) {
            const std::string after = rest[i + 1].empty() ? "" : " " + rest[i + 1];
            const std::string with = "\",\" ws " + members[i].rule + " ws" + after;
            std::string body = members[i].required ? with : with + (rest[i + 1].empty() ? " | \"\"" : " | " + rest[i + 1]);
            rest[i] = add_rule(fmt::format("{}-rest{}", hint, i), body);
        }
        // Nothing written yet: first_i.
        first[n] = "";
        for (size_t i = n; i-- > 0;) {
            std::string body = members[i].rule + " ws " + rest[i + 1];
            if (!members[i].required) body += first[i + 1].empty() ? " | \"\"" : " | " + first[i + 1];
            first[i] = add_rule(fmt::format("{}-first{}", hint, i), body);
        }
        return add_rule(hint, "\"{\" ws " + first[0] + " \"}\"");
    }

    Result<std::string> visit_array(const json& schema, const std::string& hint, const std::string& path) {
        std::string item = "json-value";
        if (auto it = schema.find("items"); it != schema.end()) {
            STRATA_ASSIGN_OR_RETURN(item, visit(*it, hint + "-item", path + "/items"));
        }
        const int64_t min = schema.value("minItems", int64_t{0});
        const int64_t max = schema.contains("maxItems") && schema["maxItems"].is_number_integer() ? schema["maxItems"].get<int64_t>() : -1;
        if (min < 0 || (max >= 0 && max < min) || min > 1000 || max > 1000) {
            return Status::error("json schema at {}: expected 0 <= minItems <= maxItems <= 1000, got {} and {} — fix the bounds", path, min, max);
        }
        if (max == 0) return add_rule(hint, "\"[\" ws \"]\"");
        const std::string more = "\",\" ws " + item + " ws";
        std::string tail;
        const int64_t lo = std::max<int64_t>(0, min - 1);
        if (max < 0) tail = fmt::format("( {} ){{{},}}", more, lo);
        else tail = fmt::format("( {} ){{{},{}}}", more, lo, max - 1);
        std::string body = item + " ws " + tail;
        if (min == 0) body = "( " + body + " )?";
        return add_rule(hint, "\"[\" ws " + body + " \"]\"");
    }

    Result<std::string> visit_string(const json& schema, const std::string& hint, const std::string& path) {
        const int64_t min = schema.value("minLength", int64_t{0});
        const int64_t max = schema.contains("maxLength") && schema["maxLength"].is_number_integer() ? schema["maxLength"].get<int64_t>() : -1;
        if (min == 0 && max < 0) return std::string("json-string");
        if (min < 0 || (max >= 0 && max < min) || min > 10000 || max > 10000) {
            return Status::error("json schema at {}: expected 0 <= minLength <= maxLength <= 10000, got {} and {} — fix the bounds", path, min, max);
        }
        const std::string count = max < 0 ? fmt::format("{{{},}}", min) : fmt::format("{{{},{}}}", min, max);
        return add_rule(hint, "\"\\\"\" json-char" + count + " \"\\\"\"");
    }

    const json& root_;
    JsonSchemaGrammarOptions options_;
    std::string prefix_;
    std::string rules_;
    std::set<std::string> used_;
    std::map<std::string, std::string> refs_;
};

}  // namespace

std::string json_primitive_rules() { return kPrimitives; }

Result<JsonSchemaRules> json_schema_rules(const nlohmann::ordered_json& schema, const JsonSchemaGrammarOptions& options,
                                          const std::string& prefix) {
    Converter c(schema, options, prefix);
    STRATA_ASSIGN_OR_RETURN(std::string value, c.convert());
    JsonSchemaRules out{c.rules(), value};
    return out;
}

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, const JsonSchemaGrammarOptions& options) {
    STRATA_ASSIGN_OR_RETURN(JsonSchemaRules r, json_schema_rules(schema, options, "schema-"));
    return "root ::= " + r.value_rule + "\n" + r.rules + kPrimitives;
}

std::string json_object_gbnf() { return std::string("root ::= json-object\n") + kPrimitives; }

}  // namespace strata
