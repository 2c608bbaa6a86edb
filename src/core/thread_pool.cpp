#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "core/spin_wait.h"

namespace strata {

namespace {
void pin_current_thread(int cpu) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % CPU_SETSIZE, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);  // best effort: a refusal is harmless
#else
    (void)cpu;
#endif
}

// The range of [0, n) that thread `index` of `count` threads owns.
std::pair<int64_t, int64_t> split_range(int64_t n, int index, int count) {
    int64_t base = n / count, extra = n % count;
    int64_t begin = index * base + (index < extra ? index : extra);
    int64_t end = begin + base + (index < extra ? 1 : 0);
    return {begin, end};
}

}  // namespace

int ThreadPool::hardware_threads() {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(Options options) : spin_time_(resolve_spin_us(options.spin_us)) {
    int threads = options.threads > 0 ? options.threads : hardware_threads();
    if (options.pin) pin_current_thread(0);
    for (int i = 1; i < threads; ++i) {
        workers_.emplace_back([this, i, pin = options.pin] {
            if (pin) pin_current_thread(i);
            worker_loop(i);
        });
    }
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    start_cv_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
        auto started = [&] { return stopping_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen; };
        if (!spin_until(started, spin_time_)) {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, started);
        }
        if (stopping_.load(std::memory_order_acquire)) return;
        // task_ and task_n_ were written before the generation was published (release), and the
        // caller does not change them until every worker has counted itself out of pending_.
        seen = generation_.load(std::memory_order_acquire);
        const FunctionRef<void(int64_t, int64_t, int)>* task = task_;
        const int64_t n = task_n_;
        auto [begin, end] = split_range(n, index, size());
        if (begin < end) (*task)(begin, end, index);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            // Under the mutex, so a caller that has just found pending_ > 0 and is about to sleep
            // cannot miss this notification.
            std::lock_guard<std::mutex> lock(mutex_);
            done_cv_.notify_one();
        }
    }
}

void ThreadPool::parallel_for(int64_t n, FunctionRef<void(int64_t, int64_t, int)> fn) {
    if (n <= 0) return;
    if (workers_.empty() || n == 1) {
        fn(0, n, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = &fn;
        task_n_ = n;
        pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
    }
    start_cv_.notify_all();  // cheap when every worker is still spinning: no sleeper, no syscall
    auto [begin, end] = split_range(n, 0, size());
    if (begin < end) fn(begin, end, 0);
    auto finished = [&] { return pending_.load(std::memory_order_acquire) == 0; };
    if (!spin_until(finished, spin_time_)) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_cv_.wait(lock, finished);
    }
    task_ = nullptr;
}

}  // namespace strata
