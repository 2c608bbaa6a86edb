#include "server/metrics.h"

#include <fmt/format.h>

namespace strata::server {

void Metrics::count_request(const std::string& route, int status) {
    std::lock_guard lock(mutex_);
    ++requests_[{route, status}];
}

void Metrics::record_task(const TaskRecord& r) {
    std::lock_guard lock(mutex_);
    ++outcomes_[r.outcome];
    prompt_tokens_ += static_cast<uint64_t>(r.prompt_tokens);
    cached_tokens_ += static_cast<uint64_t>(r.cached_tokens);
    checkpoint_tokens_ += static_cast<uint64_t>(r.checkpoint_tokens);
    generated_tokens_ += static_cast<uint64_t>(r.generated_tokens);
    prompt_seconds_ += r.prompt_seconds;
    generation_seconds_ += r.generation_seconds;
    queue_seconds_ += r.queue_seconds;
}

namespace {
void metric(std::string& out, const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

// Continuous batching: each engine step is one forward pass over the decode tokens of every
// generating slot and the prompt chunks of prefilling ones.
void render_batching(std::string& out, const SchedulerStats& s) {
    metric(out, "strata_engine_steps_total", "counter", "Engine steps (forward passes over all active slots).");
    out += fmt::format("strata_engine_steps_total {}\n", s.steps);
    metric(out, "strata_engine_fused_steps_total", "counter",
           "Steps that advanced two or more sequences in one pass, reading the weights once.");
    out += fmt::format("strata_engine_fused_steps_total {}\n", s.fused_steps);
    metric(out, "strata_engine_step_tokens_total", "counter", "Tokens computed by engine steps (decoded and prompt).");
    out += fmt::format("strata_engine_step_tokens_total {}\n", s.step_tokens);
    metric(out, "strata_batch_sequences_last", "gauge", "Sequences in the latest engine step.");
    out += fmt::format("strata_batch_sequences_last {}\n", s.last_step_sequences);
    metric(out, "strata_batch_sequences", "histogram", "Sequences per engine step.");
    for (size_t i = 0; i < kBatchSequenceBuckets.size(); ++i) {
        out += fmt::format("strata_batch_sequences_bucket{{le=\"{}\"}} {}\n", kBatchSequenceBuckets[i], s.steps_le[i]);
    }
    out += fmt::format("strata_batch_sequences_bucket{{le=\"+Inf\"}} {}\n", s.steps);
    out += fmt::format("strata_batch_sequences_sum {}\n", s.step_sequences);
    out += fmt::format("strata_batch_sequences_count {}\n", s.steps);
    metric(out, "strata_speculative_passes_total", "counter",
           "Verification passes of speculative decoding (a sampled token and its drafts in one pass).");
    out += fmt::format("strata_speculative_passes_total {}\n", s.speculative_passes);
    metric(out, "strata_speculative_drafted_tokens_total", "counter", "Drafted tokens the verification passes tested.");
    out += fmt::format("strata_speculative_drafted_tokens_total {}\n", s.drafted_tokens);
    metric(out, "strata_speculative_accepted_tokens_total", "counter",
           "Drafted tokens accepted: each one a forward pass its sequence did not need.");
    out += fmt::format("strata_speculative_accepted_tokens_total {}\n", s.accepted_tokens);
}

// Turn checkpoints (server/checkpoint_cache.h): hybrid models' states kept at turn starts and
// reply ends, so a conversation's next turn resumes instead of re-reading its prompt.
void render_checkpoints(std::string& out, const CheckpointStats& c) {
    metric(out, "strata_checkpoint_hits_total", "counter", "Requests that resumed from a turn checkpoint.");
    out += fmt::format("strata_checkpoint_hits_total {}\n", c.hits);
    metric(out, "strata_checkpoint_misses_total", "counter",
           "Requests on a hybrid model that shared more with a free slot than it could keep, and restored no checkpoint.");
    out += fmt::format("strata_checkpoint_misses_total {}\n", c.misses);
    metric(out, "strata_checkpoints_stored_total", "counter", "Turn checkpoints kept.");
    out += fmt::format("strata_checkpoints_stored_total {}\n", c.stored);
    metric(out, "strata_checkpoints_evicted_total", "counter", "Turn checkpoints dropped for the byte budget (least recently used).");
    out += fmt::format("strata_checkpoints_evicted_total {}\n", c.evicted);
    metric(out, "strata_checkpoints_dropped_total", "counter", "Turn checkpoints dropped because their slot's tokens were replaced.");
    out += fmt::format("strata_checkpoints_dropped_total {}\n", c.dropped);
    metric(out, "strata_checkpoints", "gauge", "Turn checkpoints held.");
    out += fmt::format("strata_checkpoints {}\n", c.entries);
    metric(out, "strata_checkpoint_bytes", "gauge", "Memory of the turn checkpoints held.");
    out += fmt::format("strata_checkpoint_bytes {}\n", c.bytes);
    metric(out, "strata_checkpoint_budget_bytes", "gauge", "The turn checkpoints' byte budget (--checkpoint-ram; 0: off).");
    out += fmt::format("strata_checkpoint_budget_bytes {}\n", c.budget_bytes);
}
}  // namespace

std::string Metrics::render(const SchedulerStats& s) const {
    std::lock_guard lock(mutex_);
    std::string out;
    metric(out, "strata_http_requests_total", "counter", "HTTP requests answered, by route and status.");
    for (const auto& [key, n] : requests_) {
        out += fmt::format("strata_http_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", key.first, key.second, n);
    }
    metric(out, "strata_requests_finished_total", "counter", "Generation requests finished, by outcome.");
    for (const auto& [outcome, n] : outcomes_) {
        out += fmt::format("strata_requests_finished_total{{outcome=\"{}\"}} {}\n", outcome, n);
    }
    metric(out, "strata_requests_rejected_total", "counter", "Requests refused with 503 because the queue was full.");
    out += fmt::format("strata_requests_rejected_total {}\n", rejected_.load(std::memory_order_relaxed));
    metric(out, "strata_prompt_tokens_total", "counter", "Prompt tokens of finished requests (cached ones included).");
    out += fmt::format("strata_prompt_tokens_total {}\n", prompt_tokens_);
    metric(out, "strata_prompt_tokens_cached_total", "counter", "Prompt tokens whose KV was reused from an earlier request.");
    out += fmt::format("strata_prompt_tokens_cached_total {}\n", cached_tokens_);
    metric(out, "strata_prompt_tokens_checkpoint_total", "counter",
           "Prompt tokens not read again because a turn checkpoint was restored (part of the cached ones).");
    out += fmt::format("strata_prompt_tokens_checkpoint_total {}\n", checkpoint_tokens_);
    metric(out, "strata_prompt_tokens_read_total", "counter", "Prompt tokens computed (not cached).");
    out += fmt::format("strata_prompt_tokens_read_total {}\n", prompt_tokens_ - cached_tokens_);
    metric(out, "strata_generated_tokens_total", "counter", "Tokens generated.");
    out += fmt::format("strata_generated_tokens_total {}\n", generated_tokens_);
    metric(out, "strata_prompt_seconds_total", "counter", "Time spent processing prompts.");
    out += fmt::format("strata_prompt_seconds_total {:.6f}\n", prompt_seconds_);
    metric(out, "strata_generation_seconds_total", "counter", "Time spent generating (wall time of each request's decoding).");
    out += fmt::format("strata_generation_seconds_total {:.6f}\n", generation_seconds_);
    metric(out, "strata_queue_seconds_total", "counter", "Time requests waited in the queue.");
    out += fmt::format("strata_queue_seconds_total {:.6f}\n", queue_seconds_);
    const double computed = static_cast<double>(prompt_tokens_ - cached_tokens_);
    metric(out, "strata_prompt_tokens_per_second", "gauge", "Average prompt processing speed (computed tokens only).");
    out += fmt::format("strata_prompt_tokens_per_second {:.3f}\n", prompt_seconds_ > 0 ? computed / prompt_seconds_ : 0.0);
    metric(out, "strata_generation_tokens_per_second", "gauge", "Average generation speed per request.");
    out += fmt::format("strata_generation_tokens_per_second {:.3f}\n",
                       generation_seconds_ > 0 ? static_cast<double>(generated_tokens_) / generation_seconds_ : 0.0);
    metric(out, "strata_queue_depth", "gauge", "Requests waiting for a slot.");
    out += fmt::format("strata_queue_depth {}\n", s.queued);
    metric(out, "strata_slots_busy", "gauge", "Slots serving a request.");
    out += fmt::format("strata_slots_busy {}\n", s.active);
    metric(out, "strata_slots_total", "gauge", "Slots (requests served at once).");
    out += fmt::format("strata_slots_total {}\n", s.slots);
    metric(out, "strata_kv_cache_used_tokens", "gauge", "KV cache positions holding tokens, all slots together.");
    out += fmt::format("strata_kv_cache_used_tokens {}\n", s.kv_used_tokens);
    metric(out, "strata_kv_cache_capacity_tokens", "gauge", "KV cache positions, all slots together.");
    out += fmt::format("strata_kv_cache_capacity_tokens {}\n", s.kv_capacity_tokens);
    metric(out, "strata_kv_cache_bytes", "gauge", "Memory of the KV caches.");
    out += fmt::format("strata_kv_cache_bytes {}\n", s.kv_bytes);
    render_batching(out, s);
    render_checkpoints(out, s.checkpoints);
    if (extra_) out += extra_();
    return out;
}

}  // namespace strata::server
