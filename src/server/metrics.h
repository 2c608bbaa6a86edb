#pragma once
// Counters and gauges of the server, rendered as Prometheus text at GET /metrics. Counters are
// updated from the HTTP threads and the engine thread; the gauges (queue, slots, KV use) are read
// from the scheduler when the page is rendered.
//
//   metrics.count_request("/v1/chat/completions", 200);
//   metrics.record_task(result);
//   std::string page = metrics.render(scheduler.stats());

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace strata::server {

struct SchedulerStats {
    int64_t queued = 0;
    int64_t active = 0;
    int64_t slots = 0;
    int64_t kv_used_tokens = 0;      // positions held by all slots' sessions
    int64_t kv_capacity_tokens = 0;  // slots × context size
    uint64_t kv_bytes = 0;
};

// How one task ended, as the metrics count it.
struct TaskRecord {
    std::string outcome;  // stop, length, cancelled, timeout, error
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
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

private:
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) → count
    std::map<std::string, uint64_t> outcomes_;
    uint64_t prompt_tokens_ = 0, cached_tokens_ = 0, generated_tokens_ = 0;
    double prompt_seconds_ = 0.0, generation_seconds_ = 0.0, queue_seconds_ = 0.0;
    std::atomic<uint64_t> rejected_{0};
};

}  // namespace strata::server
