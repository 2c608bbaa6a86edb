#include "server/turn_starts.h"

#include <algorithm>

namespace strata::server {

std::vector<int64_t> turn_starts(std::span<const int32_t> prompt, std::span<const int32_t> history,
                                 const std::function<bool(int32_t)>& is_control, size_t limit) {
    std::vector<int64_t> at;
    if (history.empty() || history.size() >= prompt.size() || !std::equal(history.begin(), history.end(), prompt.begin())) {
        return at;
    }
    const size_t reply = history.size();  // where the generation prompt starts
    const int32_t marker = prompt[reply];
    if (is_control(marker)) {
        for (size_t i = 1; i < reply; ++i) {
            if (prompt[i] == marker) at.push_back(static_cast<int64_t>(i));
        }
    }
    at.push_back(static_cast<int64_t>(reply));
    limit = std::max<size_t>(limit, 1);
    if (at.size() > limit) {
        // The first and the last limit - 1 (the last alone when limit is 1).
        std::vector<int64_t> kept;
        if (limit > 1) kept.push_back(at.front());
        kept.insert(kept.end(), at.end() - static_cast<long>(limit - kept.size()), at.end());
        at = std::move(kept);
    }
    return at;
}

}  // namespace strata::server
