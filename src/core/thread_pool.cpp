#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "core/check.h"
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

namespace {
// Polls for `done` (unless the backoff says to rest) and records how it went; true when done.
template <typename Done>
bool poll(Done done, std::chrono::microseconds spin_time, bool use_backoff, SpinBackoff& backoff) {
    const bool spin = spin_time.count() > 0 && (!use_backoff || backoff.should_spin());
    const bool ok = spin ? spin_until(done, spin_time) : done();
    if (use_backoff) backoff.record(spin, ok);
    return ok;
}
}  // namespace

ThreadPool::ThreadPool(Options options) : spin_time_(resolve_spin_us(options.spin_us)), spin_backoff_(options.spin_backoff) {
    int threads = options.threads > 0 ? options.threads : hardware_threads();
    STRATA_CHECK(static_cast<uint64_t>(threads) <= kRangeMask, "thread pool of more threads than ranges it can number");
    if (options.pin) pin_current_thread(0);
    for (int i = 1; i < threads; ++i) {
        workers_.emplace_back([this, i, pin = options.pin] {
            if (pin) pin_current_thread(i);
            worker_loop();
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

int ThreadPool::run_ranges(uint64_t generation) {
    const int count = size();
    int ran = 0;
    uint64_t claim = claim_.load(std::memory_order_acquire);
    for (;;) {
        if ((claim >> kRangeBits) != generation || static_cast<int>(claim & kRangeMask) >= count) return ran;
        if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        // The claimed range belongs to `generation`, whose caller waits for it: task_ and task_n_
        // stay as they were published until this range counts itself done.
        const int range = static_cast<int>(claim & kRangeMask);
        auto [begin, end] = split_range(task_n_, range, count);
        if (begin < end) (*task_)(begin, end, range);
        ++ran;
        if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
            // Under the mutex, so a caller that has just found ranges unfinished and is about to
            // sleep cannot miss this notification.
            std::lock_guard<std::mutex> lock(mutex_);
            done_cv_.notify_one();
        }
        claim = claim_.load(std::memory_order_acquire);
    }
}

void ThreadPool::worker_loop() {
    uint64_t seen = 0;
    SpinBackoff backoff;
    for (;;) {
        auto started = [&] {
            return stopping_.load(std::memory_order_acquire) || (claim_.load(std::memory_order_acquire) >> kRangeBits) != seen;
        };
        if (!poll(started, spin_time_, spin_backoff_, backoff)) {
            std::unique_lock<std::mutex> lock(mutex_);
            start_cv_.wait(lock, started);
        }
        if (stopping_.load(std::memory_order_acquire)) return;
        // Woken for this generation; if the caller and the other workers have already taken every
        // range (this thread was not running when the task came), there is nothing to do.
        seen = claim_.load(std::memory_order_acquire) >> kRangeBits;
        run_ranges(seen);
    }
}

void ThreadPool::parallel_for(int64_t n, FunctionRef<void(int64_t, int64_t, int)> fn) {
    if (n <= 0) return;
    if (workers_.empty() || n == 1) {
        fn(0, n, 0);
        return;
    }
    uint64_t generation = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = &fn;
        task_n_ = n;
        done_.store(0, std::memory_order_relaxed);
        // Generations wrap: threads compare them only for equality.
        generation = ((claim_.load(std::memory_order_relaxed) >> kRangeBits) + 1) & (~uint64_t{0} >> kRangeBits);
        claim_.store(generation << kRangeBits, std::memory_order_release);
    }
    start_cv_.notify_all();  // cheap when every worker is still spinning: no sleeper, no syscall
    run_ranges(generation);
    const int count = size();
    auto finished = [&] { return done_.load(std::memory_order_acquire) == count; };
    if (!poll(finished, spin_time_, spin_backoff_, caller_backoff_)) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_cv_.wait(lock, finished);
    }
    task_ = nullptr;
}

}  // namespace strata
