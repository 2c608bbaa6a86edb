#pragma once
// DeepSeek-V4's KV compressors (HF DeepseekV4HCACompressor, DeepseekV4CSACompressor and the
// indexer's own; NEW_ARCHS.md §B1.4): every `ratio` tokens become one compressed entry, a
// softmax-gated pool of their projections:
//   kv_j = W_kv·x_j,  z_j = W_gate·x_j + ape[j mod ratio]
//   entry w = RoPE(norm(Σ_slots softmax_slots(z) ⊙ kv), position ratio·w)   (per channel)
// The heavy compressor (HCA, not overlapped) pools the `ratio` tokens of window w. The overlapped
// one (CSA, and the indexer's) projects twice the width: each token's first half (Ca) joins the
// next window's entry, its second half (Cb) its own, so entry w pools 2·ratio slots: Ca of window
// w − 1 and Cb of window w (window 0 has no Ca slots).
//
// An entry exists once its window is complete; the tokens of an incomplete window (and, when
// overlapped, the previous window's Ca rows) are the running state carried from one batch to the
// next, kept in the sequence's RecurrentState (they cannot be rebuilt from the cache).
//
//   KvCompressorShape shape{.ratio = 4, .dim = 512, .overlap = true};
//   kv_compressor_step(shape, w, kv, gate, n, pos0, eps, rope, state, [&](int64_t w) { return entry_row(w); });

#include <cstdint>

#include "backend/cpu/rope_table.h"
#include "backend/weight.h"
#include "core/function_ref.h"

namespace strata {

struct KvCompressorWeights {
    Weight wkv;    // *_compressor_kv [n_embd, width], width = dim (HCA) or 2·dim (overlapped)
    Weight wgate;  // *_compressor_gate [n_embd, width]
    Weight ape;    // *_compressor_ape [width, ratio] F32: the gate's bias per slot of a window
    Weight norm;   // *_compressor_norm [dim] F32
};

struct KvCompressorShape {
    int64_t ratio = 0;     // tokens per entry
    int64_t dim = 0;       // values per entry
    bool overlap = false;  // CSA's two series (Ca, Cb)
    int64_t width() const { return overlap ? 2 * dim : dim; }
    // The running state: the current window's kv and gate rows (width each) and, overlapped, the
    // previous window's Ca kv and gate rows (dim each).
    int64_t state_floats() const { return ratio * 2 * width() + (overlap ? ratio * 2 * dim : 0); }
};

// Folds tokens at positions pos0 .. pos0 + n − 1 into `state` (their projections kv and gate:
// n rows of shape.width(), the gate without its ape) and writes each entry whose window they
// complete to entry_out(w) (dim floats): normalized with `norm` (eps), its last rope.rope_dims
// values rotated at position ratio·w. The state must hold the tokens before pos0 (zeros at 0).
void kv_compressor_step(const KvCompressorShape& shape, const KvCompressorWeights& w, const float* kv, const float* gate,
                        int64_t n, int64_t pos0, float eps, const RopeTable& rope, float* state,
                        FunctionRef<float*(int64_t)> entry_out);

}  // namespace strata
