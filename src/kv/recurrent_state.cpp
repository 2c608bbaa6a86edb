#include "kv/recurrent_state.h"

#include <cstring>

namespace strata {

RecurrentState::RecurrentState(const std::vector<bool>& recurrent, int64_t conv_floats, int64_t ssm_floats)
    : conv_floats_(conv_floats), ssm_floats_(ssm_floats) {
    for (bool r : recurrent) {
        // AlignedBuffer zero-fills: a fresh state is the state before the first token.
        conv_.emplace_back(r ? static_cast<size_t>(conv_floats) * sizeof(float) : 0);
        ssm_.emplace_back(r ? static_cast<size_t>(ssm_floats) * sizeof(float) : 0);
    }
}

void RecurrentState::clear() {
    for (auto* buffers : {&conv_, &ssm_}) {
        for (auto& b : *buffers) {
            if (b.size() > 0) std::memset(b.data(), 0, b.size());
        }
    }
    if (storage_) storage_->clear();
    n_past_ = 0;
}

uint64_t RecurrentState::bytes() const {
    uint64_t total = 0;
    for (const auto& b : conv_) total += b.size();
    for (const auto& b : ssm_) total += b.size();
    if (storage_) total += storage_->bytes();
    return total;
}

}  // namespace strata
