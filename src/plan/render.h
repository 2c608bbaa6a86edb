#pragma once
// A plan drawn for people and scripts: terminal bars (one per memory, segments proportional to
// bytes, a legend with sizes), the same bars as a standalone SVG, and JSON.
//
//   std::string text = render_plan_text(plan);     // what `strata plan` prints
//   std::string svg = render_plan_svg(plan);       // `strata plan --svg plan.svg`
//   nlohmann::ordered_json j = plan_to_json(plan); // `strata plan --json`

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/planner.h"

namespace strata {

// Character widths of bar segments: proportional to bytes, every non-zero segment at least one
// character, the widths summing to `width` (when any segment is non-zero and there are at most
// `width` of them). Largest remainders get the leftover characters.
std::vector<int> bar_widths(const std::vector<uint64_t>& bytes, int width);

std::string render_plan_text(const Plan& plan, int bar_width = 64);
std::string render_plan_svg(const Plan& plan);
nlohmann::ordered_json plan_to_json(const Plan& plan);

}  // namespace strata
