#include "core/thread_pool.h"

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

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

ThreadPool::ThreadPool(Options options) {
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
        const std::function<void(int64_t, int64_t, int)>* task;
        int64_t n;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_) return;
            seen = generation_;
            task = task_;
            n = task_n_;
        }
        auto [begin, end] = split_range(n, index, size());
        if (begin < end) (*task)(begin, end, index);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0) done_cv_.notify_one();
        }
    }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
    if (n <= 0) return;
    if (workers_.empty() || n == 1) {
        fn(0, n, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = &fn;
        task_n_ = n;
        pending_ = static_cast<int>(workers_.size());
        ++generation_;
    }
    start_cv_.notify_all();
    auto [begin, end] = split_range(n, 0, size());
    if (begin < end) fn(begin, end, 0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
}

}  // namespace strata
