#pragma once
// --draft and a request's "speculative" mode: none (plain decoding), lookup (always k_max drafts
// where the lookup finds some), auto (lookup with k chosen online in 0..k_max, 0 where it does not
// pay). Apart from runtime/speculative.h so that request parsing (and its fuzz target) needs only
// the names, not the engine.

#include <string_view>

#include "core/status.h"

namespace strata {

enum class DraftMode { None, Lookup, Auto };
Result<DraftMode> parse_draft_mode(std::string_view name);
std::string_view draft_mode_name(DraftMode mode);

}  // namespace strata
