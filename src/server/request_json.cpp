#include "server/request_json.h"

#include <fmt/format.h>

namespace strata::server {

using ojson = nlohmann::ordered_json;

namespace {

// Requests nest a few levels (messages → content blocks → ...). A deep nesting bomb within the
// body limit would make the recursive walks after parsing (template values, dump) overflow the
// stack, so it is refused before parsing.
constexpr int kMaxJsonDepth = 64;

std::optional<ApiError> check_depth(std::string_view body) {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < body.size(); ++i) {
        const char c = body[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth) {
                return ApiError::invalid("", fmt::format("request body nests deeper than {} levels", kMaxJsonDepth),
                                         "invalid_json");
            }
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return std::nullopt;
}

}  // namespace

ApiResult<ojson> parse_json_object(std::string_view body) {
    if (auto e = check_depth(body)) return *e;
    ojson j = ojson::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        return ApiError::invalid("", "request body is not valid JSON (send a JSON object with Content-Type: application/json)",
                                 "invalid_json");
    }
    if (!j.is_object()) return ApiError::invalid("", fmt::format("request body: expected a JSON object, got {}", j.type_name()), "invalid_json");
    return j;
}

const ojson* field(const ojson& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
}

std::string shown(const ojson& v) {
    std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
}

std::optional<ApiError> read_float(const ojson& obj, const char* name, double lo, double hi, float& out) {
    const ojson* v = field(obj, name);
    if (!v) return std::nullopt;
    if (!v->is_number() || !(v->get<double>() >= lo && v->get<double>() <= hi)) {
        return ApiError::invalid(name, fmt::format("{}: expected a number from {} to {}, got {}", name, lo, hi, shown(*v)));
    }
    out = static_cast<float>(v->get<double>());
    return std::nullopt;
}

std::optional<ApiError> read_int(const ojson& obj, const char* name, int64_t lo, int64_t hi, std::optional<int64_t>& out) {
    const ojson* v = field(obj, name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi) {
        return ApiError::invalid(name, fmt::format("{}: expected an integer from {} to {}, got {}", name, lo, hi, shown(*v)));
    }
    out = v->get<int64_t>();
    return std::nullopt;
}

std::optional<ApiError> read_bool(const ojson& obj, const char* name, bool& out) {
    const ojson* v = field(obj, name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return ApiError::invalid(name, fmt::format("{}: expected true or false, got {}", name, shown(*v)));
    out = v->get<bool>();
    return std::nullopt;
}

}  // namespace strata::server
