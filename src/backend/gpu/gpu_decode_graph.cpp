// DecodeGraph (backend/gpu/gpu_decode_graph.h).
#include "backend/gpu/gpu_decode_graph.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata::gpu {

DecodeGraph::DecodeGraph(GpuContext& ctx, int64_t n_vocab, int64_t n_embd)
    : ctx_(ctx), n_vocab_(n_vocab), n_embd_(n_embd), enabled_(ctx.tuning().graphs) {}

void DecodeGraph::disable(const std::string& why) {
    enabled_ = false;
    graph_.reset();
    std::fprintf(stderr, "strata: decode step as a GPU graph failed (%s); decoding with eager launches\n", why.c_str());
}

const float* DecodeGraph::queue_step(const Enqueue& enqueue) {
    ctx_.upload(io_.data(), host_io_.data(), 2 * sizeof(int32_t));
    return enqueue(io_.as<int32_t>(), host_row_.as<float>());
}

const float* DecodeGraph::finish(const float* device_logits, float* logits) {
    if (logits == nullptr) {
        in_flight_ = true;  // the next run waits before it refills the page-locked inputs
        return device_logits;
    }
    ctx_.download(host_logits_.data(), device_logits, static_cast<uint64_t>(n_vocab_) * sizeof(float));
    ctx_.synchronize();
    std::memcpy(logits, host_logits_.data(), static_cast<size_t>(n_vocab_) * sizeof(float));
    return device_logits;
}

const float* DecodeGraph::run(int32_t token, int32_t position, const float* row, const std::vector<const void*>& addresses,
                              const Enqueue& enqueue, float* logits) {
    if (!enabled_) return nullptr;
    if (!io_) {  // first use: the fixed buffers every captured step copies through
        std::string error;
        io_ = ctx_.pool().allocate(2 * sizeof(int32_t), &error);
        if (!io_ || !host_io_.allocate(2 * sizeof(int32_t), &error) ||
            !host_row_.allocate(static_cast<uint64_t>(n_embd_) * sizeof(float), &error) ||
            !host_logits_.allocate(static_cast<uint64_t>(n_vocab_) * sizeof(float), &error)) {
            disable(error.empty() ? "no memory for its buffers" : error);
            return nullptr;
        }
    }
    if (in_flight_) {  // the last step may not have read its token and row yet
        ctx_.synchronize();
        in_flight_ = false;
    }
    host_io_.as<int32_t>()[0] = token;
    host_io_.as<int32_t>()[1] = position;
    std::memcpy(host_row_.data(), row, static_cast<size_t>(n_embd_) * sizeof(float));
    const Key key{ctx_.scratch_generation(), addresses};

    if (!(graph_.ready() && key == captured_)) {
        if (!(have_warm_ && key == warm_)) {
            // New addresses: run eagerly so the scratch buffers settle, capture next time.
            graph_.reset();
            const float* device_logits = queue_step(enqueue);
            warm_ = Key{ctx_.scratch_generation(), addresses};
            have_warm_ = true;
            return finish(device_logits, logits);
        }
        std::string why;
        if (!graph_.begin_capture(ctx_.stream(), &why)) {
            disable(why);
            return nullptr;
        }
        graph_logits_ = queue_step(enqueue);
        if (!graph_.end_capture(ctx_.stream(), &why)) {
            disable(why);
            return nullptr;
        }
        if (ctx_.scratch_generation() != key.scratch_generation) {  // a buffer moved while capturing
            disable("a scratch buffer was reallocated during capture");
            return nullptr;
        }
        captured_ = key;
    }
    graph_.launch(ctx_.stream());
    return finish(graph_logits_, logits);
}

}  // namespace strata::gpu
