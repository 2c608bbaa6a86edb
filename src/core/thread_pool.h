#pragma once
// A fixed pool of worker threads for CPU compute. Threads are created once (never per call) and
// optionally pinned one per core, because the expert kernels are memory-bound and a thread that
// migrates loses its cache and its NUMA-local pages. Options::spin_us lets threads poll briefly
// between tasks instead of sleeping: a decode step issues ~8 parallel_for calls per layer, each a
// few tens of microseconds apart, and each sleep costs a futex round trip per worker. By default
// it is on (500 µs) only on machines with at least 8 hardware threads: there it measured 1.1-1.3x
// faster decode (CPU alone, and the CPU lane of the GPU's expert tiers: bench/results/
// 2026-11-29-cpu-decode, 2026-11-29-architectures-gpu), while on a 2-core machine with fewer free
// cores than threads spinning measured 2x slower.
//
//   ThreadPool pool(ThreadPool::Options{.threads = 8});
//   pool.parallel_for(n_rows, [&](int64_t begin, int64_t end, int worker) { ... });

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/function_ref.h"

namespace strata {

class ThreadPool {
public:
    struct Options {
        int threads = 0;     // 0: one per hardware thread
        bool pin = false;    // pin worker i to CPU i
        // Microseconds a thread polls for the next task (or the caller for the end of one) before
        // sleeping; 0 sleeps at once. Only worth it with a core free for every thread.
        // kAutoSpin: kAutoSpinUs with at least kAutoSpinMinThreads hardware threads, else 0.
        int spin_us = kAutoSpin;
    };

    static constexpr int kAutoSpin = -1;
    static constexpr int kAutoSpinUs = 500;
    static constexpr int kAutoSpinMinThreads = 8;

    explicit ThreadPool(Options options);
    ThreadPool() : ThreadPool(Options{}) {}
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Number of threads that run work, the calling thread included.
    int size() const { return static_cast<int>(workers_.size()) + 1; }

    // Splits [0, n) into contiguous ranges, one per thread, and runs fn(begin, end, worker_index)
    // on each; the caller runs the first range and returns when all ranges are done. Must not be
    // called from inside a task of the same pool.
    void parallel_for(int64_t n, FunctionRef<void(int64_t, int64_t, int)> fn);

    static int hardware_threads();
    // The polling time in use (kAutoSpin resolved).
    int spin_us() const { return static_cast<int>(spin_time_.count()); }
    static int resolve_spin_us(int spin_us) {
        if (spin_us != kAutoSpin) return spin_us < 0 ? 0 : spin_us;
        return hardware_threads() >= kAutoSpinMinThreads ? kAutoSpinUs : 0;
    }

private:
    void worker_loop(int index);

    std::vector<std::thread> workers_;
    std::chrono::microseconds spin_time_;
    std::mutex mutex_;
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    const FunctionRef<void(int64_t, int64_t, int)>* task_ = nullptr;
    int64_t task_n_ = 0;
    // generation_ and pending_ are written under mutex_ (so sleepers cannot miss a change) but read
    // without it by spinning threads.
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> pending_{0};
    std::atomic<bool> stopping_{false};
};

}  // namespace strata
