#include "kv/recurrent_state.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"

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
    for (History& h : histories_) {
        if (h.floats.size() > 0) std::memset(h.floats.data(), 0, h.floats.size());
        std::fill(h.tokens.begin(), h.tokens.end(), h.fill_token);
    }
    if (storage_) storage_->clear();
    n_past_ = 0;
}

void RecurrentState::add_history(int64_t layer, int64_t floats, int64_t n_tokens, int32_t fill_token) {
    STRATA_CHECK(!has_history(layer), "one history per layer");
    History h;
    h.layer = layer;
    h.floats = AlignedBuffer(static_cast<size_t>(floats) * sizeof(float));
    h.tokens.assign(static_cast<size_t>(n_tokens), fill_token);
    h.fill_token = fill_token;
    histories_.push_back(std::move(h));
}

// The host buffers in one fixed order, so snapshot() and restore() walk the same bytes.
template <typename State, typename Visit>
void RecurrentState::each_host_buffer(State& s, Visit&& visit) {
    for (auto& b : s.conv_) visit(b.data(), b.size());
    for (auto& b : s.ssm_) visit(b.data(), b.size());
    for (auto& h : s.histories_) {
        visit(h.floats.data(), h.floats.size());
        visit(h.tokens.data(), h.tokens.size() * sizeof(int32_t));
    }
}

RecurrentSnapshot RecurrentState::snapshot() const {
    RecurrentSnapshot s;
    s.n_past = n_past_;
    s.bytes.resize(static_cast<size_t>(bytes()));
    uint8_t* at = s.bytes.data();
    each_host_buffer(*this, [&](const void* p, size_t n) {
        if (n > 0) std::memcpy(at, p, n);
        at += n;
    });
    if (storage_) storage_->save(at);
    return s;
}

Status RecurrentState::restore(const RecurrentSnapshot& s) {
    if (s.bytes.size() != bytes()) {
        return Status::error("restoring a recurrent state: expected a snapshot of {} bytes, got {} (a snapshot of another model's state)",
                             bytes(), s.bytes.size());
    }
    const uint8_t* at = s.bytes.data();
    each_host_buffer(*this, [&](void* p, size_t n) {
        if (n > 0) std::memcpy(p, at, n);
        at += n;
    });
    if (storage_) storage_->load(at);
    n_past_ = s.n_past;
    return Status::ok();
}

uint64_t RecurrentState::bytes() const {
    uint64_t total = 0;
    for (const auto& b : conv_) total += b.size();
    for (const auto& b : ssm_) total += b.size();
    for (const History& h : histories_) total += h.floats.size() + h.tokens.size() * sizeof(int32_t);
    if (storage_) total += storage_->bytes();
    return total;
}

}  // namespace strata
