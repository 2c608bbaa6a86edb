#pragma once
// Counters and gauges of the server, rendered as Prometheus text at GET /metrics. Counters are
// updated from the HTTP threads and the engine thread; the gauges (queue, slots, KV use) are read
// from the scheduler when the page is rendered.
//
//   metrics.count_request("/v1/chat/completions", 200);
//   metrics.record_task(result);
//   std::string page = metrics.render(scheduler.stats());

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "server/checkpoint_cache.h"

namespace strata::server {

// Upper bounds of the batch-size histogram (sequences per engine step); the last bucket is +Inf.
inline constexpr std::array<int64_t, 7> kBatchSequenceBuckets = {1, 2, 4, 8, 16, 32, 64};

struct SchedulerStats {
    int64_t queued = 0;
    int64_t active = 0;
    int64_t slots = 0;
    int64_t kv_used_tokens = 0;      // positions held by all slots' sessions
    int64_t kv_capacity_tokens = 0;  // slots × context size
    uint64_t kv_bytes = 0;
    // Engine steps (forward passes) and how many sequences each advanced (continuous batching).
    uint64_t steps = 0;
    uint64_t fused_steps = 0;        // steps of two or more sequences that read the weights once
    uint64_t step_sequences = 0;     // sequences over all steps
    uint64_t step_tokens = 0;        // tokens over all steps (decoded and prompt)
    int64_t last_step_sequences = 0;
    std::array<uint64_t, kBatchSequenceBuckets.size()> steps_le{};  // steps with <= bucket sequences
    CheckpointStats checkpoints;     // turn checkpoints of hybrid models
    // Speculative decoding: verification passes, drafts they tested and drafts accepted (each an
    // engine step its sequence did not need).
    uint64_t speculative_passes = 0, drafted_tokens = 0, accepted_tokens = 0;
};

// How one task ended, as the metrics count it.
struct TaskRecord {
    std::string outcome;  // stop, length, cancelled, timeout, error
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
    int64_t checkpoint_tokens = 0;  // of cached_tokens, those restored from a turn checkpoint
    int64_t generated_tokens = 0;
    double prompt_seconds = 0.0;
    double generation_seconds = 0.0;
    double queue_seconds = 0.0;
};

class Metrics {
public:
    void count_request(const std::string& route, int status);
    void count_rejected() { rejected_.fetch_add(1, std::memory_order_relaxed); }
    void record_task(const TaskRecord& r);
    std::string render(const SchedulerStats& s) const;
    // Prometheus text appended to every render (the front end's hardware rows: expert tiers, GPUs).
    void set_extra(std::function<std::string()> extra) {
        std::lock_guard lock(mutex_);
        extra_ = std::move(extra);
    }

private:
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) → count
    std::map<std::string, uint64_t> outcomes_;
    uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, checkpoint_tokens_ = 0, generated_tokens_ = 0;
    double prompt_seconds_ = 0.0, generation_seconds_ = 0.0, queue_seconds_ = 0.0;
    std::atomic<uint64_t> rejected_{0};
    std::function<std::string()> extra_;
};

}  // namespace strata::server
