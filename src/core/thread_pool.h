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
// A call's ranges are claimed, not assigned: the caller and every worker take the next unclaimed
// range until none is left, and the call returns once every claimed range is done. A worker the
// operating system has not run yet (its core lent to another program) therefore holds nothing up:
// the threads that run take its range, and when it wakes it finds nothing left. Assigned ranges
// made each call wait for the last worker to be scheduled, which on a desktop with busy cores is
// a scheduler time slice per call (bench/results/2026-12-07-cpu-contention).
//
//   ThreadPool pool(ThreadPool::Options{.threads = 8});
//   pool.parallel_for(n_rows, [&](int64_t begin, int64_t end, int range) { ... });

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/function_ref.h"
#include "core/spin_backoff.h"

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
        // Stop polling after polls that keep running out (core/spin_backoff.h): each thread then
        // sleeps at once for a while. Off by default until measured on a many-core machine with
        // busy cores (bench --spin-backoff; bench/results/2026-12-07-cpu-contention/device.sh).
        bool spin_backoff = false;
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

    // Splits [0, n) into size() contiguous ranges (the same split every call, so results do not
    // depend on which thread ran what) and runs fn(begin, end, range_index) once for each; the
    // range index, below size(), names per-range scratch. The calling thread takes ranges too and
    // returns when all are done. Must not be called from inside a task of the same pool.
    void parallel_for(int64_t n, FunctionRef<void(int64_t, int64_t, int)> fn);

    static int hardware_threads();
    // The polling time in use (kAutoSpin resolved).
    int spin_us() const { return static_cast<int>(spin_time_.count()); }
    bool spin_backoff() const { return spin_backoff_; }
    static int resolve_spin_us(int spin_us) {
        if (spin_us != kAutoSpin) return spin_us < 0 ? 0 : spin_us;
        return hardware_threads() >= kAutoSpinMinThreads ? kAutoSpinUs : 0;
    }

private:
    void worker_loop();
    // Claims and runs ranges of the task of generation `generation` until none is left; returns
    // how many it ran.
    int run_ranges(uint64_t generation);

    // claim_ packs the task's generation (high bits) and the next unclaimed range (low
    // kRangeBits): one compare-and-swap both checks that the task is still the one a thread woke
    // for and takes a range of it, so a worker that wakes late can never take a range of the next.
    static constexpr int kRangeBits = 20;
    static constexpr uint64_t kRangeMask = (uint64_t{1} << kRangeBits) - 1;

    std::vector<std::thread> workers_;
    std::chrono::microseconds spin_time_;
    bool spin_backoff_ = false;
    SpinBackoff caller_backoff_;  // the calling thread's (one caller at a time)
    std::mutex mutex_;
    std::condition_variable start_cv_;
    std::condition_variable done_cv_;
    // The task: written by the caller before claim_ publishes its generation (release), read by
    // a thread after it has claimed a range (acquire); unchanged until every range is done.
    const FunctionRef<void(int64_t, int64_t, int)>* task_ = nullptr;
    int64_t task_n_ = 0;
    // claim_ and done_ change without the mutex, except a new generation (published under it, so
    // a sleeper cannot miss it) and the last range's completion (notified under it).
    std::atomic<uint64_t> claim_{0};
    std::atomic<int> done_{0};
    std::atomic<bool> stopping_{false};
};

}  // namespace strata
