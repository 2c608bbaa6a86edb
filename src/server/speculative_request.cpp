#include "server/speculative_request.h"

#include <fmt/format.h>

#include "server/request_json.h"

namespace strata::server {

std::optional<ApiError> parse_speculative(const nlohmann::ordered_json& body, SpeculativeChoice& out) {
    const nlohmann::ordered_json* v = field(body, "speculative");
    if (!v) return std::nullopt;
    out.given = true;
    if (v->is_boolean()) {
        if (!v->get<bool>()) out.mode = DraftMode::None;
        return std::nullopt;
    }
    if (!v->is_object()) {
        return ApiError::invalid("speculative", fmt::format("speculative: expected true, false or {{\"mode\", \"max\"}}, got {}", shown(*v)));
    }
    for (const auto& [key, value] : v->items()) {
        if (key != "mode" && key != "max") {
            return ApiError::invalid("speculative", fmt::format("speculative: unknown member \"{}\" (it takes mode and max)", key));
        }
    }
    if (const nlohmann::ordered_json* mode = field(*v, "mode")) {
        if (!mode->is_string()) return ApiError::invalid("speculative", fmt::format("speculative.mode: expected \"auto\", \"lookup\" or \"none\", got {}", shown(*mode)));
        auto m = parse_draft_mode(mode->get<std::string>());
        if (!m) return ApiError::invalid("speculative", fmt::format("speculative.mode: {}", m.status().message()));
        out.mode = *m;
    }
    std::optional<int64_t> max;
    if (auto e = read_int(*v, "max", 0, 64, max)) {
        e->message = "speculative." + e->message;
        e->param = "speculative";
        return e;
    }
    out.max = max;
    return std::nullopt;
}

std::optional<SpeculationOptions> resolve_speculative(const SpeculativeChoice& choice, const SpeculationOptions& server) {
    if (!choice.given) return std::nullopt;
    SpeculationOptions o = server;
    if (choice.mode) {
        o.mode = *choice.mode;
    } else if (o.mode == DraftMode::None) {
        o.mode = DraftMode::Auto;  // true, or only a max: on
    }
    if (choice.max) o.k_max = *choice.max;
    return o;
}

}  // namespace strata::server
