#pragma once
// One task at a time on a thread of its own, started by one thread and awaited by it later, so
// that the starting thread can do other work meanwhile. The expert tiers run their CPU lane here
// (it calls the thread pool's parallel_for from this thread) while the calling thread queues the
// GPU's part of the same layer. Hand-overs poll for `spin_us` before sleeping, as the thread
// pool's do: they come a few hundred microseconds apart in a decode step.
//
//   BackgroundTask lane(pool.spin_us());
//   auto work = [&] { compute(); };
//   lane.start(work);      // `work` must stay alive until wait() returns
//   queue_other_things();
//   lane.wait();           // rethrows what the task threw

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/function_ref.h"

namespace strata {

class BackgroundTask {
public:
    explicit BackgroundTask(int spin_us);
    ~BackgroundTask();
    BackgroundTask(const BackgroundTask&) = delete;
    BackgroundTask& operator=(const BackgroundTask&) = delete;

    // Runs `task` on the background thread; the previous task must have been awaited.
    void start(FunctionRef<void()> task);
    // Returns once the started task has finished (at once when none was started).
    void wait();

private:
    void loop();

    std::chrono::microseconds spin_time_;
    std::mutex mutex_;
    std::condition_variable start_cv_, done_cv_;
    // Written by the starting thread before `started_` is raised (release), read after; the
    // callable it refers to is the caller's to keep alive until wait().
    std::optional<FunctionRef<void()>> task_;
    std::exception_ptr error_;
    // started_ counts tasks handed over, finished_ tasks done; both change under mutex_ (so a
    // sleeper cannot miss a change) and are read without it by polling threads.
    std::atomic<uint64_t> started_{0}, finished_{0};
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace strata
