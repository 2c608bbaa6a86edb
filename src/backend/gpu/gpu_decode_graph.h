#pragma once
// A one-token decode step as one graph launch (device_runtime.h's GpuGraph). The model queues its
// step through a callback that reads the token id and position from a fixed device buffer, and
// its embedding row (looked up on the host: the table stays in RAM) from a fixed page-locked host
// buffer; this class owns both, the page-locked buffer the logits come back to when they are
// wanted on the host (copied after the graph, which ends at the device logits), and the decision
// when to capture:
// - the first step with a given set of addresses runs eagerly, so every scratch buffer reaches
//   its size before a capture bakes the addresses in;
// - the next step with the same addresses is captured and launched, later ones are replayed;
// - a scratch reallocation (a prompt batch grew a buffer) or another KV cache means new
//   addresses: eager once more, then a new capture.
// When capture fails, it says so once on stderr and every later step runs eagerly.
// STRATA_GPU_GRAPHS=0 turns graphs off (to compare, or to rule them out).
//
//   DecodeGraph graph(ctx, n_vocab, n_embd);
//   const auto step = [&](const int32_t* io, const float* row) { return queue_step(io, io + 1, row); };
//   if (!graph.run(token, position, embedding_row, cache_addresses, step, logits)) run_eagerly();
//   // logits == nullptr: the step is only queued; its logits stay on the device (the address run
//   // returned, read in stream order), and the next run waits for it before refilling its inputs.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/gpu/device_runtime.h"

namespace strata::gpu {

class DecodeGraph {
public:
    // Queues one decode step on the context's stream, reading its token id from io[0] and its
    // position from io[1] (device memory) and its n_embd embedding values from `row` (page-locked
    // host memory, to be copied up by the step); returns the device address of its n_vocab logits.
    using Enqueue = std::function<const float*(const int32_t* io, const float* row)>;

    DecodeGraph(GpuContext& ctx, int64_t n_vocab, int64_t n_embd);
    bool enabled() const { return enabled_; }

    // Runs the step (token at `position`) and returns the device address of its logits, after
    // copying them to `logits` (and waiting) unless that is null; null when graphs are off or
    // capture failed, and then nothing ran: the caller runs the step eagerly.
    // `addresses`: the device addresses the step uses that are not context scratch (the KV
    // cache's layers); the graph is kept only while they and the scratch generation stay put.
    // `row`: the token's embedding (n_embd floats, any host memory; copied in first).
    const float* run(int32_t token, int32_t position, const float* row, const std::vector<const void*>& addresses,
                     const Enqueue& enqueue, float* logits);

private:
    struct Key {
        uint64_t scratch_generation = 0;
        std::vector<const void*> addresses;
        bool operator==(const Key&) const = default;
    };
    const float* queue_step(const Enqueue& enqueue);              // returns the step's device logits
    const float* finish(const float* device_logits, float* logits);  // the copy back, if wanted
    void disable(const std::string& why);

    GpuContext& ctx_;
    int64_t n_vocab_, n_embd_;
    bool enabled_ = true;
    DeviceBuffer io_;                 // [token, position]
    PinnedBuffer host_io_, host_row_, host_logits_;
    GpuGraph graph_;
    Key captured_, warm_;             // what the graph was captured with; what the last eager step used
    bool have_warm_ = false;
    const float* graph_logits_ = nullptr;  // where the captured step leaves its logits
    bool in_flight_ = false;               // a step was queued and not waited for
};

}  // namespace strata::gpu
