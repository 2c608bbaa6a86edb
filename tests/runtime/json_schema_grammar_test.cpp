// JSON Schema → grammar: each keyword's texts accepted and refused by the matcher, the checker of
// the tests agreeing with the grammar on them, and the refusals of what the converter cannot do.
#include <gtest/gtest.h>

#include <memory>

#include "runtime/grammar_matcher.h"
#include "runtime/json_schema_grammar.h"
#include "support/json_schema_check.h"

namespace strata {
namespace {

using json = nlohmann::ordered_json;

std::shared_ptr<const Grammar> schema_grammar(const json& schema, bool strict = true) {
    auto text = json_schema_to_gbnf(schema, {.strict = strict});
    EXPECT_TRUE(text.is_ok()) << text.status().message();
    if (!text) return nullptr;
    auto g = parse_grammar(*text);
    EXPECT_TRUE(g.is_ok()) << g.status().message() << "\n" << *text;
    if (!g) return nullptr;
    return std::make_shared<const Grammar>(std::move(*g));
}

bool accepts(const std::shared_ptr<const Grammar>& g, std::string_view text) {
    GrammarMatcher m(g);
    return m.accept(text) && m.complete();
}

// The grammar and the schema checker agree on `text`, and the answer is `valid`.
void expect_both(const json& schema, std::string_view text, bool valid, bool strict = true) {
    auto g = schema_grammar(schema, strict);
    ASSERT_TRUE(g);
    EXPECT_EQ(accepts(g, text), valid) << schema.dump() << " on " << text;
    const json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_discarded()) {
        EXPECT_EQ(test::schema_violation(nlohmann::json::parse(schema.dump()), nlohmann::json::parse(text), strict).empty(), valid) << schema.dump() << " on " << text;
    }
}

TEST(JsonSchemaGrammar, ObjectsRequiredOptionalAndStrictness) {
    const json s = {{"type", "object"},
                    {"properties", {{"name", {{"type", "string"}}}, {"age", {{"type", "integer"}}}, {"ok", {{"type", "boolean"}}}}},
                    {"required", {"name"}}};
    expect_both(s, R"({"name": "Ann", "age": 31, "ok": true})", true);
    expect_both(s, R"({"name":"Ann"})", true);
    expect_both(s, R"({ "name" : "Ann" , "ok" : false })", true);
    expect_both(s, R"({"age": 31})", false);                 // required missing
    expect_both(s, R"({"name": "Ann", "age": "x"})", false); // wrong type
    expect_both(s, R"({"name": "Ann", "extra": 1})", false); // strict: no other member
    expect_both(s, R"({"name": "Ann", "extra": 1})", true, /*strict=*/false);
    expect_both(s, R"({"name": "Ann",})", false);
    expect_both(json{{"type", "object"}, {"properties", json::object()}}, "{}", true);
    expect_both(json{{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}, R"({"a": 1, "b": 2})", true);
    expect_both(json{{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}, R"({"a": "x"})", false);
}

TEST(JsonSchemaGrammar, ArraysWithBounds) {
    const json s = {{"type", "array"}, {"items", {{"type", "integer"}}}, {"minItems", 1}, {"maxItems", 3}};
    expect_both(s, "[1]", true);
    expect_both(s, "[1, 2, 3]", true);
    expect_both(s, "[]", false);
    expect_both(s, "[1,2,3,4]", false);
    expect_both(s, "[1, \"a\"]", false);
    expect_both(json{{"type", "array"}}, R"([1, "a", {"b": null}, [true]])", true);
    expect_both(json{{"type", "array"}, {"maxItems", 0}}, "[]", true);
}

TEST(JsonSchemaGrammar, ScalarsEnumsConstAndStringLengths) {
    expect_both(json{{"enum", {"red", "green", 3, nullptr}}}, R"("green")", true);
    expect_both(json{{"enum", {"red", "green", 3, nullptr}}}, "3", true);
    expect_both(json{{"enum", {"red", "green", 3, nullptr}}}, R"("blue")", false);
    expect_both(json{{"const", {{"a", 1}}}}, R"({"a":1})", true);
    expect_both(json{{"type", "string"}, {"minLength", 2}, {"maxLength", 3}}, R"("ab")", true);
    expect_both(json{{"type", "string"}, {"minLength", 2}, {"maxLength", 3}}, R"("é€x")", true);  // code points, not bytes
    expect_both(json{{"type", "string"}, {"minLength", 2}, {"maxLength", 3}}, R"("abcd")", false);
    expect_both(json{{"type", "string"}, {"minLength", 2}, {"maxLength", 3}}, R"("a")", false);
    expect_both(json{{"type", "string"}}, R"("tab\tquote\" \u00e9")", true);
    expect_both(json{{"type", "number"}}, "-12.5e3", true);
    expect_both(json{{"type", "number"}}, "012", false);
    expect_both(json{{"type", "integer"}}, "12.5", false);
    expect_both(json{{"type", "boolean"}}, "false", true);
    expect_both(json{{"type", "null"}}, "null", true);
    expect_both(json{{"type", {"string", "null"}}}, "null", true);
    expect_both(json{{"type", {"string", "null"}}}, "1", false);
}

TEST(JsonSchemaGrammar, AnyOfOneOfRefsAndRecursion) {
    const json s = {{"$defs", {{"node", {{"type", "object"},
                                         {"properties", {{"v", {{"type", "integer"}}}, {"next", {{"anyOf", {{{"$ref", "#/$defs/node"}}, {{"type", "null"}}}}}}}},
                                         {"required", {"v", "next"}}}}}},
                    {"$ref", "#/$defs/node"}};
    expect_both(s, R"({"v": 1, "next": {"v": 2, "next": null}})", true);
    expect_both(s, R"({"v": 1, "next": {"v": 2}})", false);
    const json one = {{"oneOf", {{{"type", "integer"}}, {{"type", "string"}, {"maxLength", 2}}}}};
    expect_both(one, "7", true);
    expect_both(one, R"("ab")", true);
    expect_both(one, R"("abc")", false);
    const json defs = {{"definitions", {{"c", {{"enum", {"x", "y"}}}}}}, {"type", "array"}, {"items", {{"$ref", "#/definitions/c"}}}};
    expect_both(defs, R"(["x","y","x"])", true);
    expect_both(defs, R"(["z"])", false);
    const json all = {{"allOf", {{{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}, {"required", {"a"}}},
                                 {{"properties", {{"b", {{"type", "boolean"}}}}}, {"required", {"b"}}}}}};
    // Each part alone would refuse the other's member in strict mode: allOf is read as JSON Schema reads it.
    expect_both(all, R"({"a": 1, "b": true})", true, /*strict=*/false);
    expect_both(all, R"({"a": 1})", false, /*strict=*/false);
}

TEST(JsonSchemaGrammar, JsonObjectModeIsAnyObject) {
    auto g = parse_grammar(json_object_gbnf());
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    auto shared = std::make_shared<const Grammar>(std::move(*g));
    EXPECT_TRUE(accepts(shared, R"({"a": [1, {"b": "c"}], "d": null})"));
    EXPECT_TRUE(accepts(shared, "{}"));
    EXPECT_FALSE(accepts(shared, "[1]"));
    EXPECT_FALSE(accepts(shared, R"({"a": })"));
}

TEST(JsonSchemaGrammar, RefusesWhatItCannotEnforceWithThePath) {
    auto pattern = json_schema_to_gbnf(json{{"type", "object"}, {"properties", {{"id", {{"type", "string"}, {"pattern", "^a"}}}}}});
    ASSERT_FALSE(pattern);
    EXPECT_NE(pattern.status().message().find("#/properties/id"), std::string::npos) << pattern.status().message();
    EXPECT_NE(pattern.status().message().find("\"pattern\" is not supported"), std::string::npos);
    auto ref = json_schema_to_gbnf(json{{"$ref", "https://example.com/s.json"}});
    ASSERT_FALSE(ref);
    EXPECT_NE(ref.status().message().find("#/$defs/NAME"), std::string::npos);
    auto type = json_schema_to_gbnf(json{{"type", "date"}});
    ASSERT_FALSE(type);
    EXPECT_NE(type.status().message().find("got \"date\""), std::string::npos);
    auto bounds = json_schema_to_gbnf(json{{"type", "array"}, {"minItems", 3}, {"maxItems", 1}});
    ASSERT_FALSE(bounds);
    EXPECT_NE(bounds.status().message().find("minItems"), std::string::npos);
}

}  // namespace
}  // namespace strata
