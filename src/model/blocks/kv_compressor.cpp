// KV compressors (kv_compressor.h), in HF's order of float operations: the slots' gates are
// softmaxed per channel (f32), the kv summed weighted in slot order (Ca of the previous window
// first, then the current window), then the RMS norm and the rope.
#include "model/blocks/kv_compressor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/ops.h"
#include "core/check.h"

namespace strata {

namespace {

// Views into the state: current window rows [kv (width) | gate (width)], then, overlapped, the
// previous window's Ca rows [kv (dim) | gate (dim)].
struct StateView {
    const KvCompressorShape& s;
    float* state;
    float* cur_kv(int64_t j) const { return state + j * 2 * s.width(); }
    float* cur_gate(int64_t j) const { return cur_kv(j) + s.width(); }
    float* prev_kv(int64_t j) const { return state + s.ratio * 2 * s.width() + j * 2 * s.dim; }
    float* prev_gate(int64_t j) const { return prev_kv(j) + s.dim; }
};

void emit(const KvCompressorShape& s, const StateView& v, int64_t window, const Weight& norm, float eps,
          const RopeTable& rope, float* out) {
    const int64_t d = s.dim, m = s.ratio;
    // Slot (kv, gate) pointers in HF's order; the current window's Cb is its second half. Kept
    // per thread, so that a decode step that completes a window allocates nothing.
    thread_local std::vector<const float*> kv, gate;
    thread_local std::vector<float> p;
    kv.clear(), gate.clear();
    if (s.overlap && window > 0) {
        for (int64_t j = 0; j < m; ++j) kv.push_back(v.prev_kv(j)), gate.push_back(v.prev_gate(j));
    }
    const int64_t half = s.overlap ? d : 0;
    for (int64_t j = 0; j < m; ++j) kv.push_back(v.cur_kv(j) + half), gate.push_back(v.cur_gate(j) + half);
    p.resize(kv.size());
    for (int64_t c = 0; c < d; ++c) {
        float mx = -std::numeric_limits<float>::infinity();
        for (size_t i = 0; i < kv.size(); ++i) mx = std::max(mx, gate[i][c]);
        float sum = 0.0f;
        for (size_t i = 0; i < kv.size(); ++i) sum += p[i] = std::exp(gate[i][c] - mx);
        float acc = 0.0f;
        for (size_t i = 0; i < kv.size(); ++i) acc += kv[i][c] * (p[i] / sum);
        out[c] = acc;
    }
    cpu_rms_norm(out, norm.f32(), 1, d, eps, out);
    const int32_t pos = static_cast<int32_t>(window * m);
    cpu_rope_table(out + d - rope.rope_dims, 1, 1, d, rope, &pos);
}

}  // namespace

void kv_compressor_step(const KvCompressorShape& s, const KvCompressorWeights& w, const float* kv, const float* gate,
                        int64_t n, int64_t pos0, float eps, const RopeTable& rope, float* state,
                        FunctionRef<float*(int64_t)> entry_out) {
    STRATA_CHECK(s.ratio > 0 && s.dim >= rope.rope_dims, "a compressor needs a ratio and entries wider than the rope");
    const StateView v{s, state};
    const int64_t width = s.width();
    const float* ape = w.ape.f32();
    for (int64_t t = 0; t < n; ++t) {
        const int64_t pos = pos0 + t, j = pos % s.ratio;
        std::copy_n(kv + t * width, width, v.cur_kv(j));
        float* g = v.cur_gate(j);
        for (int64_t c = 0; c < width; ++c) g[c] = gate[t * width + c] + ape[j * width + c];
        if (j != s.ratio - 1) continue;
        const int64_t window = pos / s.ratio;
        emit(s, v, window, w.norm, eps, rope, entry_out(window));
        if (s.overlap) {
            // This window's Ca rows join the next window's entry.
            for (int64_t r = 0; r < s.ratio; ++r) {
                std::copy_n(v.cur_kv(r), s.dim, v.prev_kv(r));
                std::copy_n(v.cur_gate(r), s.dim, v.prev_gate(r));
            }
        }
    }
}

}  // namespace strata
