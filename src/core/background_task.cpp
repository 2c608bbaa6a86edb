#include "core/background_task.h"

#include <utility>

#include "core/check.h"
#include "core/spin_wait.h"

namespace strata {

BackgroundTask::BackgroundTask(int spin_us) : spin_time_(spin_us < 0 ? 0 : spin_us), thread_([this] { loop(); }) {}

BackgroundTask::~BackgroundTask() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_.store(true, std::memory_order_release);
    }
    start_cv_.notify_all();
    thread_.join();
}

void BackgroundTask::start(FunctionRef<void()> task) {
    STRATA_CHECK(finished_.load(std::memory_order_acquire) == started_.load(std::memory_order_relaxed),
                 "BackgroundTask::start while the previous task runs");
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_.emplace(task);
        started_.fetch_add(1, std::memory_order_release);
    }
    start_cv_.notify_one();  // cheap when the thread still polls: no sleeper, no system call
}

void BackgroundTask::wait() {
    const uint64_t target = started_.load(std::memory_order_relaxed);
    auto finished = [&] { return finished_.load(std::memory_order_acquire) == target; };
    if (!spin_until(finished, spin_time_)) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_cv_.wait(lock, finished);
    }
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void BackgroundTask::loop() {
    uint64_t seen = 0;
    for (;;) {
        auto ready = [&] {
            return stopping_.load(std::memory_order_acquire) || started_.load(std::memory_order_acquire) != seen;
        };
        if (!spin_until(ready, spin_time_)) {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, ready);
        }
        if (started_.load(std::memory_order_acquire) == seen) return;  // stopping, nothing left to run
        seen = started_.load(std::memory_order_acquire);
        try {
            (*task_)();
        } catch (...) {
            error_ = std::current_exception();
        }
        {
            // Under the mutex, so a waiter that has just found the task unfinished and is about
            // to sleep cannot miss this notification.
            std::lock_guard<std::mutex> lock(mutex_);
            finished_.store(seen, std::memory_order_release);
        }
        done_cv_.notify_one();
    }
}

}  // namespace strata
