#include "runtime/draft_mode.h"

namespace strata {

Result<DraftMode> parse_draft_mode(std::string_view name) {
    if (name == "none") return DraftMode::None;
    if (name == "lookup") return DraftMode::Lookup;
    if (name == "auto") return DraftMode::Auto;
    return Status::error("draft mode '{}': expected none, lookup or auto", name);
}

std::string_view draft_mode_name(DraftMode mode) {
    switch (mode) {
        case DraftMode::None: return "none";
        case DraftMode::Lookup: return "lookup";
        case DraftMode::Auto: return "auto";
    }
    return "none";
}

}  // namespace strata
