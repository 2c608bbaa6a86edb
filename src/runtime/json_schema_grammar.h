#pragma once
// JSON Schema → GBNF (runtime/grammar.h): the grammar of the JSON texts that satisfy a schema, so
// that sampling under it (runtime/grammar_sampling.h) can only write valid output.
//
//   auto gbnf = json_schema_to_gbnf(schema, {.strict = true});    // Result<std::string>
//   auto grammar = parse_grammar(*gbnf);
//
// The schema is an ordered_json so that properties keep the client's order.
// Supported: type (one or a list), object properties / required / additionalProperties
// (false when strict and absent), arrays with items / minItems / maxItems, enum, const, strings
// with minLength / maxLength, integer, number, boolean, null, anyOf / oneOf (as alternatives;
// oneOf's exclusivity is not enforced), allOf of object schemas (merged), $ref to #/$defs/... or
// #/definitions/... (recursion allowed). Properties are written in the schema's order; optional
// ones may be left out. Not enforced (the output may break them): numeric bounds (minimum,
// maximum, multipleOf), string format, uniqueItems. Refused with a message: pattern,
// patternProperties, not, if/then/else, $ref outside the document.
//
// Numbers are bounded (16 integer digits, 16 fraction digits, 2 exponent digits: a double holds every one) and whitespace
// between tokens to 4 characters, so that a confused model cannot write forever inside a value
// the schema leaves unbounded. json_object_gbnf() is any JSON object.

#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace strata {

struct JsonSchemaGrammarOptions {
    // OpenAI's strict mode: an object without additionalProperties allows no other member.
    bool strict = true;
};

Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, const JsonSchemaGrammarOptions& options = {});

// Any JSON object (response_format json_object).
std::string json_object_gbnf();

// The rules every schema grammar uses (value, object, array, string, number, ws, ...), for
// grammars that embed a schema's value in other text: append them and json_schema_rules() to
// a root of your own.
struct JsonSchemaRules {
    std::string rules;       // GBNF rules, one per line, none named root
    std::string value_rule;  // the rule of the schema's value
};
// `prefix` keeps the rule names of several schemas apart in one grammar ("tool-0-").
Result<JsonSchemaRules> json_schema_rules(const nlohmann::ordered_json& schema, const JsonSchemaGrammarOptions& options,
                                          const std::string& prefix);
// The shared primitives that json_schema_rules()' rules refer to: add them once per grammar.
std::string json_primitive_rules();

}  // namespace strata
