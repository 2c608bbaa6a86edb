#pragma once
// A scheduler slot: one Session (its own KV cache) and the request it serves. Private to the
// scheduler's files (scheduler.cpp: admission and completion; scheduler_step.cpp: the engine step).

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "runtime/grammar_sampling.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative.h"
#include "runtime/text_stream.h"
#include "server/scheduler.h"

namespace strata::server {

struct Scheduler::Slot {
    Slot(int index, Model& model, const SessionOptions& o, ThreadPool& pool) : id(index), session(model, o, pool) {}

    const int id;                      // its turn checkpoints' key in the CheckpointCache
    Session session;
    std::shared_ptr<TaskHandle> task;  // null: free. Only the engine thread changes it.
    std::optional<Sampler> sampler;
    std::optional<GrammarConstraint> grammar;  // the task's grammar state, when it has one
    std::optional<StopStringStreamer> streamer;
    size_t prompt_done = 0;            // prompt tokens already in the session
    size_t checkpoint_cursor = 0;      // the task's first checkpoint position not yet passed
    int32_t next_token = 0;            // a generating slot's token for this step's forward pass
    // Speculative decoding: the task's (unset: off), this step's pass (next_token and the drafts;
    // empty: a plain step), and the token the last verification drew where it rejected a draft.
    std::optional<Speculation> speculation;
    std::vector<int32_t> pass;
    int32_t drawn = -1;
    TaskResult result;
    std::chrono::steady_clock::time_point started, decode_started;
    uint64_t last_used = 0;            // for picking the least recently used slot on a tie
    std::atomic<int64_t> kv_used{0};   // session.n_past(), readable by stats()
};

}  // namespace strata::server
