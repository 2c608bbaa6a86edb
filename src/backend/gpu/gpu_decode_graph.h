#pragma once
// A one-token decode step as one graph launch (device_runtime.h's GpuGraph). The model queues its
// step through a callback that reads the token id and position from a fixed device buffer; this
// class owns that buffer, the page-locked host buffers the step's copies use (a graph replays
// copies from the addresses it captured), and the decision when to capture:
// - the first step with a given set of addresses runs eagerly, so every scratch buffer reaches
//   its size before a capture bakes the addresses in;
// - the next step with the same addresses is captured and launched, later ones are replayed;
// - a scratch reallocation (a prompt batch grew a buffer) or another KV cache means new
//   addresses: eager once more, then a new capture.
// When capture fails, it says so once on stderr and every later step runs eagerly.
// STRATA_GPU_GRAPHS=0 turns graphs off (to compare, or to rule them out).
//
//   DecodeGraph graph(ctx, n_vocab);
//   if (!graph.run(token, position, cache_addresses, [&](const int32_t* io) { return queue_step(io, io + 1); }, logits))
//       run_eagerly();

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/gpu/device_runtime.h"

namespace strata::gpu {

class DecodeGraph {
public:
    // Queues one decode step on the context's stream, reading its token id from io[0] and its
    // position from io[1] (device memory); returns the device address of its n_vocab logits.
    using Enqueue = std::function<const float*(const int32_t* io)>;

    DecodeGraph(GpuContext& ctx, int64_t n_vocab);
    bool enabled() const { return enabled_; }

    // Runs the step (token at `position`) and copies its logits to `logits`; false when graphs
    // are off or capture failed, and then nothing ran: the caller runs the step eagerly.
    // `addresses`: the device addresses the step uses that are not context scratch (the KV
    // cache's layers); the graph is kept only while they and the scratch generation stay put.
    bool run(int32_t token, int32_t position, const std::vector<const void*>& addresses, const Enqueue& enqueue,
             float* logits);

private:
    struct Key {
        uint64_t scratch_generation = 0;
        std::vector<const void*> addresses;
        bool operator==(const Key&) const = default;
    };
    void queue_step(const Enqueue& enqueue);
    void disable(const std::string& why);

    GpuContext& ctx_;
    int64_t n_vocab_;
    bool enabled_ = true;
    DeviceBuffer io_;                 // [token, position]
    PinnedBuffer host_io_, host_logits_;
    GpuGraph graph_;
    Key captured_, warm_;             // what the graph was captured with; what the last eager step used
    bool have_warm_ = false;
};

}  // namespace strata::gpu
