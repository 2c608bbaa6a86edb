#pragma once
// Reading a request body's JSON, shared by the OpenAI and Anthropic schemas: the body parsed into
// an object (nesting bounded before parsing), fields read with their type and range checked, and
// every refusal an ApiError whose message names the field ("temperature: expected a number from
// 0 to 2, got \"hot\"").
//
//   auto body = parse_json_object(text);
//   if (!body) return body.error;
//   if (auto e = read_float(*body.value, "temperature", 0.0, 2.0, sampling.temperature)) return *e;
//   if (const auto* v = field(*body.value, "stop")) ...   // null counts as absent

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/openai_schema.h"

namespace strata::server {

ApiResult<nlohmann::ordered_json> parse_json_object(std::string_view body);

// A field's value, or nullptr when absent or null (clients send null for "not set").
const nlohmann::ordered_json* field(const nlohmann::ordered_json& obj, const char* name);

// A value as a message shows it: JSON text cut to 40 characters.
std::string shown(const nlohmann::ordered_json& v);

// Absent or null fields leave `out` as it is.
std::optional<ApiError> read_float(const nlohmann::ordered_json& obj, const char* name, double lo, double hi, float& out);
std::optional<ApiError> read_int(const nlohmann::ordered_json& obj, const char* name, int64_t lo, int64_t hi,
                                 std::optional<int64_t>& out);
std::optional<ApiError> read_bool(const nlohmann::ordered_json& obj, const char* name, bool& out);

}  // namespace strata::server
