// The copies all-reduce of a tensor split (gpu_collective.h) and the vendor's collective library
// names; the NCCL / RCCL side is in gpu_collective.cpp.
#include "backend/gpu/gpu_collective.h"

#include <iterator>

#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

namespace {

// The slot the copies collective gathers the other ranks' parts in (one size per step shape, so
// a captured step sees it stay put).
constexpr int kCollectiveScratchSlot = 51;

class CopyCollective final : public GpuCollective {
public:
    explicit CopyCollective(std::vector<GpuContext*> ranks) : ranks_(std::move(ranks)) {
        for (GpuContext* r : ranks_) {
            r->activate();  // an event belongs to the device current when it is made
            ready_.push_back(std::make_unique<GpuEvent>());
            copied_.push_back(std::make_unique<GpuEvent>());
        }
    }

    void all_reduce_sum(std::span<float* const> parts, uint64_t count) override {
        const size_t n = ranks_.size();
        STRATA_CHECK(parts.size() == n, "all_reduce_sum: one part per rank");
        const uint64_t bytes = count * sizeof(float);
        // Every part is complete before anyone reads it; every copy of a part is done before its
        // rank overwrites it with the sum. Events are recorded before any stream waits on them.
        for (size_t r = 0; r < n; ++r) {
            ranks_[r]->activate();
            ready_[r]->record(ranks_[r]->stream());
        }
        std::vector<float*> gathered(n);
        for (size_t r = 0; r < n; ++r) {
            GpuContext& g = *ranks_[r];
            g.activate();
            gathered[r] = g.scratch_floats(kCollectiveScratchSlot, count * n);
            for (size_t q = 0; q < n; ++q) {
                if (q == r) continue;
                ready_[q]->make_wait(g.stream());
                copy_peer_async(gathered[r] + q * count, g.device().ordinal, parts[q], ranks_[q]->device().ordinal, bytes,
                                g.stream());
            }
            copied_[r]->record(g.stream());
        }
        for (size_t r = 0; r < n; ++r) {
            GpuContext& g = *ranks_[r];
            g.activate();
            const float* sources[kGpuMaxSumParts];
            for (size_t q = 0; q < n; ++q) {
                if (q != r) copied_[q]->make_wait(g.stream());
                sources[q] = q == r ? parts[r] : gathered[r] + q * count;
            }
            gpu_sum_parts(parts[r], sources, static_cast<int>(n), static_cast<int64_t>(count), g);
        }
    }

    bool capturable() const override { return true; }  // plain copies and kernels (the caller checks peer access)
    std::string describe() const override { return "copies between GPUs"; }

private:
    std::vector<GpuContext*> ranks_;
    std::vector<std::unique_ptr<GpuEvent>> ready_, copied_;
};

}  // namespace

std::unique_ptr<GpuCollective> make_copy_collective(std::vector<GpuContext*> ranks) {
    return std::make_unique<CopyCollective>(std::move(ranks));
}

const char* collective_library_name() { return vendor::kCollectiveName; }

std::vector<std::string> collective_library_files() {
    return std::vector<std::string>(std::begin(vendor::kCollectiveLibraries), std::end(vendor::kCollectiveLibraries));
}

}  // namespace strata::gpu
