// GpuCandidateSelector (backend/gpu/gpu_sampling.h).
#include "backend/gpu/gpu_sampling.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"

namespace strata::gpu {
namespace {

static_assert(sizeof(GpuCandidateHeader) == 32 && sizeof(LogitCandidate) == 8,
              "plan/allocations.cpp's gpu_sampling_bytes counts a 32-byte header and 8-byte candidates");

uint64_t candidates_offset() { return sizeof(GpuCandidateHeader); }
uint64_t penalties_offset(int64_t n_vocab) {
    return candidates_offset() + static_cast<uint64_t>(n_vocab) * sizeof(LogitCandidate);
}
uint64_t saved_offset(int64_t n_vocab) { return penalties_offset(n_vocab) + 2 * static_cast<uint64_t>(n_vocab) * sizeof(int32_t); }

}  // namespace

uint64_t GpuCandidateSelector::device_bytes(int64_t n_vocab) {
    return saved_offset(n_vocab) + static_cast<uint64_t>(n_vocab) * sizeof(float);
}

Status GpuCandidateSelector::allocate(GpuContext& ctx, int64_t n_vocab) {
    n_vocab_ = n_vocab;
    std::string error;
    ctx.activate();
    device_ = ctx.pool().allocate(device_bytes(n_vocab), &error);
    if (!device_) return Status::error("the sampling buffers ({} bytes of VRAM): {}", device_bytes(n_vocab), error);
    const uint64_t first = candidates_offset() + static_cast<uint64_t>(std::min(n_vocab, kFirstCopy)) * sizeof(LogitCandidate);
    if (!host_.allocate(first, &error)) return Status::error("the sampling buffers ({} bytes of page-locked memory): {}", first, error);
    return Status::ok();
}

void GpuCandidateSelector::select(float* logits, const CandidateQuery& q, CandidateSet& out, GpuContext& ctx) {
    STRATA_CHECK(allocated(), "GPU sampling before its buffers were allocated");
    const auto n_penalized = static_cast<int64_t>(q.penalized_ids.size());
    STRATA_CHECK(n_penalized <= n_vocab_ && q.penalized_counts.size() == q.penalized_ids.size(),
                 "penalties: at most one per token of the vocabulary, each with its count");
    auto* base = static_cast<uint8_t*>(device_.data());
    auto* header = reinterpret_cast<GpuCandidateHeader*>(base);
    auto* candidates = reinterpret_cast<LogitCandidate*>(base + candidates_offset());
    auto* penalized = reinterpret_cast<int32_t*>(base + penalties_offset(n_vocab_));
    auto* saved = reinterpret_cast<float*>(base + saved_offset(n_vocab_));
    ctx.activate();
    if (n_penalized > 0) {  // the query outlives the synchronize below
        const uint64_t bytes = static_cast<uint64_t>(n_penalized) * sizeof(int32_t);
        ctx.upload(penalized, q.penalized_ids.data(), bytes);
        ctx.upload(penalized + n_penalized, q.penalized_counts.data(), bytes);
    }
    GpuSelectParams p;
    p.temperature = q.temperature;
    p.top_k = q.temperature != 0.0f && q.takes_top_k(n_vocab_) ? q.top_k : 0;  // as the host
    p.top_p = q.top_p;
    p.min_p = q.min_p;
    p.repetition = q.repetition_penalty;
    p.presence = q.presence_penalty;
    p.frequency = q.frequency_penalty;
    p.n_penalized = static_cast<int32_t>(n_penalized);
    gpu_select_candidates(logits, n_vocab_, p, penalized, saved, header, candidates, ctx);
    ctx.download(host_.data(), device_.data(), host_.bytes());
    ctx.synchronize();

    GpuCandidateHeader h;
    std::memcpy(&h, host_.data(), sizeof h);
    STRATA_CHECK(h.count >= 1 && h.count <= n_vocab_, "GPU sampling returned no candidate");
    const auto count = static_cast<size_t>(h.count);
    out.tokens.resize(count);
    const size_t first = std::min(count, static_cast<size_t>(kFirstCopy));
    std::memcpy(out.tokens.data(), static_cast<uint8_t*>(host_.data()) + candidates_offset(), first * sizeof(LogitCandidate));
    if (count > first) {  // a wide candidate set (flat distributions, no top-k): the rest by a second copy
        ctx.download(out.tokens.data() + first, candidates + first, (count - first) * sizeof(LogitCandidate));
        ctx.synchronize();
    }
    out.top_k = h.top_k;
    out.top = h.top;
    out.sum = h.sum;
}

}  // namespace strata::gpu
