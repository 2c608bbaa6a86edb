#pragma once
// Sampling on the GPU: the sampler's reduction (backend/logit_candidates.h) over a row of logits
// that stays in VRAM. One kernel applies the penalties, finds the row's maximum and, by the
// query, the arg-max (greedy), the top-k floor, or the probability mass and the top-p / min-p
// floors, and gathers every logit at or above the floor; only those candidates come back (a
// greedy step copies back one). The host's select_candidates (runtime/select_candidates.h) is
// the reference: the same floors (shared formulas), the same maxima, the same candidates; the
// mass sum differs only by summation order (tests/gpu/sampling_gpu_test.cpp).
//
//   GpuCandidateSelector selector;
//   STRATA_TRY(selector.allocate(ctx, n_vocab));             // at load: counted by the planner
//   selector.select(device_logits_row, sampler.query(n_vocab), set, ctx);   // waits for the answer
//   int32_t next = sampler.choose(set);

#include <cstdint>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"
#include "core/status.h"
#include "backend/logit_candidates.h"

namespace strata::gpu {

class GpuCandidateSelector {
public:
    // Candidates copied back with the header in one copy; more take a second copy.
    static constexpr int64_t kFirstCopy = 4096;
    // VRAM the selector holds for a vocabulary (plan/allocations.h counts it with the logits).
    static uint64_t device_bytes(int64_t n_vocab);

    Status allocate(GpuContext& ctx, int64_t n_vocab);
    bool allocated() const { return static_cast<bool>(device_); }
    // Reduces the row at `logits` (on ctx's device, n_vocab floats written by work queued on ctx's
    // stream) to `out` and waits for it. The row is the same afterwards.
    void select(float* logits, const CandidateQuery& query, CandidateSet& out, GpuContext& ctx);

private:
    int64_t n_vocab_ = 0;
    DeviceBuffer device_;  // header, n_vocab candidates, 2 · n_vocab penalty ints, n_vocab saved floats
    PinnedBuffer host_;    // header and the first kFirstCopy candidates
};

}  // namespace strata::gpu
