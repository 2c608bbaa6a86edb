#pragma once
// The state that recurrent (linear-attention) layers carry from one token to the next, kept
// beside the KV cache: per layer, the last kernel-1 inputs of the causal short convolution and
// the delta-rule state matrix of every head. Unlike the KV cache it does not grow with the
// context, and it cannot be rewound: it always describes the sequence up to position n_past().
//
//   RecurrentState rs = model->make_recurrent_state();   // zeros: the state before token 0
//   float* conv = rs.conv(layer);    // (kernel-1) rows of conv channels, oldest first
//   float* s = rs.ssm(layer);        // n_v_heads × d_k × d_v delta-rule state
//   rs.advance(n_tokens);            // after a batch has been folded in
//   RecurrentSnapshot at = rs.snapshot();   // a turn checkpoint: host bytes of every buffer
//   rs.restore(at);                  // back to that position, bit for bit

#include <cstdint>
#include <memory>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/status.h"

namespace strata {

// State a backend keeps outside host memory (the GPU model's, in VRAM). The RecurrentState owns
// it, so it lives exactly as long as the session whose state it is. Each backend copies its own
// buffers for a snapshot, so the state never needs to know where they are.
class RecurrentStateStorage {
public:
    virtual ~RecurrentStateStorage() = default;
    virtual void clear() = 0;  // back to zeros, the state before the first token
    virtual uint64_t bytes() const = 0;
    // Copies every buffer into `dst` (bytes() of host memory), finished when it returns.
    virtual void save(uint8_t* dst) const = 0;
    // The inverse of save(): `src` holds bytes() written by save() of a storage of the same shape.
    virtual void load(const uint8_t* src) = 0;
};

// A recurrent state frozen at one position, in host memory: what a turn checkpoint keeps of a
// hybrid model (its KV rows are kept by the cache that owns them). Restoring it gives the exact
// bytes back, so the logits after a restore equal those of an uninterrupted run.
struct RecurrentSnapshot {
    int64_t n_past = 0;
    std::vector<uint8_t> bytes;  // the host buffers in order, then the storage's save()
};

class RecurrentState {
public:
    RecurrentState() = default;  // no recurrent layers (attention-only models)
    // Layers with recurrent[il] false get no storage.
    RecurrentState(const std::vector<bool>& recurrent, int64_t conv_floats, int64_t ssm_floats);
    // A state whose buffers live in `storage` only: conv() and ssm() must not be used.
    explicit RecurrentState(std::unique_ptr<RecurrentStateStorage> storage) : storage_(std::move(storage)) {}
    RecurrentStateStorage* storage() const { return storage_.get(); }

    bool has_layer(int64_t layer) const {
        return layer >= 0 && layer < static_cast<int64_t>(conv_.size()) && conv_[static_cast<size_t>(layer)].size() > 0;
    }
    bool empty() const { return conv_floats_ == 0 && ssm_floats_ == 0 && histories_.empty() && !storage_; }
    float* conv(int64_t layer) { return conv_[static_cast<size_t>(layer)].as<float>(); }
    float* ssm(int64_t layer) { return ssm_[static_cast<size_t>(layer)].as<float>(); }

    // A history beside a layer's conv and delta-rule state, for blocks that carry more (qwen4exp's
    // PLE block: its short convolution's last inputs and the last token ids its n-gram hash
    // reads): `floats` floats, zeros after clear(), and `n_tokens` token ids, `fill_token` after
    // clear(). One per layer; the layer needs no conv or ssm storage of its own.
    void add_history(int64_t layer, int64_t floats, int64_t n_tokens, int32_t fill_token);
    bool has_history(int64_t layer) const { return history_of(layer) != nullptr; }
    float* history(int64_t layer) { return history_of(layer)->floats.as<float>(); }
    int32_t* history_tokens(int64_t layer) { return history_of(layer)->tokens.data(); }

    // Positions folded in so far; the next batch must start here (or at 0, after clear()).
    int64_t n_past() const { return n_past_; }
    void advance(int64_t n_tokens) { n_past_ += n_tokens; }
    // Back to the state before the first token (all zeros), as a new sequence starts.
    void clear();
    uint64_t bytes() const;

    // A copy of every buffer (host ones and the storage's) at n_past().
    RecurrentSnapshot snapshot() const;
    // Back to `s`; fails when it was taken of a state of another shape (another model).
    Status restore(const RecurrentSnapshot& s);

private:
    template <typename State, typename Visit>
    static void each_host_buffer(State& s, Visit&& visit);

    struct History {
        int64_t layer = -1;
        AlignedBuffer floats;
        std::vector<int32_t> tokens;
        int32_t fill_token = 0;
    };
    History* history_of(int64_t layer) {
        for (History& h : histories_) {
            if (h.layer == layer) return &h;
        }
        return nullptr;
    }
    const History* history_of(int64_t layer) const { return const_cast<RecurrentState*>(this)->history_of(layer); }

    int64_t conv_floats_ = 0, ssm_floats_ = 0;
    std::vector<History> histories_;
    int64_t n_past_ = 0;
    std::vector<AlignedBuffer> conv_, ssm_;  // empty buffers for non-recurrent layers
    std::unique_ptr<RecurrentStateStorage> storage_;
};

}  // namespace strata
