#include "runtime/text_stream.h"

#include <algorithm>

namespace strata {

namespace {
// Length of the longest prefix of s that does not end inside a UTF-8 character.
size_t complete_utf8_prefix(std::string_view s) {
    size_t i = s.size();
    size_t back = 0;
    while (i > 0 && back < 4) {
        const auto c = static_cast<unsigned char>(s[i - 1]);
        if ((c & 0xC0) != 0x80) {
            const size_t need = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
            return back + 1 >= need ? s.size() : i - 1;
        }
        --i;
        ++back;
    }
    return s.size();
}

// How many trailing bytes of text could be the beginning of a stop string.
size_t stop_prefix_overlap(std::string_view text, const std::vector<std::string>& stops) {
    size_t hold = 0;
    for (const auto& s : stops) {
        for (size_t k = std::min(s.size() - 1, text.size()); k > hold; --k) {
            if (text.substr(text.size() - k) == std::string_view(s).substr(0, k)) {
                hold = k;
                break;
            }
        }
    }
    return hold;
}
}  // namespace

std::string StopStringStreamer::push(std::string_view piece) {
    if (stopped_) return {};
    text_ += piece;
    // The earliest stop string wins; only text after what was already sent (less a stop's
    // length) can hold a new match.
    size_t cut = std::string::npos;
    const std::string* cut_by = nullptr;
    for (const auto& s : stops_) {
        const size_t from = emitted_ > s.size() ? emitted_ - s.size() : 0;
        const size_t at = text_.find(s, from);
        if (at < cut) {
            cut = at;
            cut_by = &s;
        }
    }
    size_t ready;
    if (cut != std::string::npos) {
        text_.resize(std::max(cut, emitted_));
        stopped_ = true;
        matched_ = *cut_by;
        ready = text_.size();
    } else {
        const size_t complete = complete_utf8_prefix(text_);
        ready = complete - std::min(complete, stop_prefix_overlap(text_, stops_));
    }
    if (ready <= emitted_) return {};
    std::string out = text_.substr(emitted_, ready - emitted_);
    emitted_ = ready;
    return out;
}

std::string StopStringStreamer::finish() {
    std::string out = text_.substr(std::min(emitted_, text_.size()));
    emitted_ = text_.size();
    return out;
}

}  // namespace strata
