#pragma once
// A request's choice of speculative decoding (an extension of the OpenAI and Anthropic bodies):
// "speculative": false turns it off for the request, true turns it on (auto where the server has
// it off), {"mode": "auto" | "lookup" | "none", "max": K} sets the mode and the most drafts per
// step. Absent: the server's --draft settings.
//
//   if (auto e = parse_speculative(body, request.speculative)) return *e;
//   spec.speculation = resolve_speculative(request.speculative, scheduler.options().speculation);

#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/speculative.h"
#include "server/openai_schema.h"

namespace strata::server {

std::optional<ApiError> parse_speculative(const nlohmann::ordered_json& body, SpeculativeChoice& out);
// The settings a task runs with: the server's, changed by what the request chose (nullopt when it
// chose nothing).
std::optional<SpeculationOptions> resolve_speculative(const SpeculativeChoice& choice, const SpeculationOptions& server);

}  // namespace strata::server
