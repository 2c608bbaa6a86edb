#pragma once
// How long the copy stream of the GPU expert tiers spends copying experts (the link's busy time):
// an event pair around each batch of copies, recorded after the batch's waits so that the first
// event marks when the copies really start, and read back once both are done, never waited for.
// A batch still in flight is counted by a later collect().
//
//   clock.begin(copy_stream);  ... queue copies ...  clock.end(copy_stream);
//   stats.seconds_link += clock.collect();

#include <deque>
#include <memory>

#include "backend/gpu/device_runtime.h"

namespace strata {

class LinkClock {
public:
    void begin(void* stream) {
        if (free_.empty()) free_.push_back(std::make_unique<Span>());
        open_ = std::move(free_.back());
        free_.pop_back();
        open_->start.record(stream);
    }
    void end(void* stream) {
        open_->end.record(stream);
        pending_.push_back(std::move(open_));
    }
    // Seconds of the batches done since the last call.
    double collect() {
        double seconds = 0;
        while (!pending_.empty() && pending_.front()->end.done()) {
            seconds += static_cast<double>(pending_.front()->end.ms_since(pending_.front()->start)) / 1e3;
            free_.push_back(std::move(pending_.front()));
            pending_.pop_front();
        }
        return seconds;
    }

private:
    struct Span {
        gpu::GpuEvent start, end;
    };
    std::unique_ptr<Span> open_;
    std::deque<std::unique_ptr<Span>> pending_, free_;
};

}  // namespace strata
