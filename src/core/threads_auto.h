#pragma once
// `--threads auto`: one compute thread per CPU that other programs leave free, not one per
// hardware thread. On a desktop a compiler or a browser holds some cores; a pool with a thread
// for each of them shares those cores with it, and each parallel step then waits for the threads
// the operating system has not run yet (bench/results/2026-12-07-cpu-contention). The choice
// reads the CPUs this process may use (its affinity mask) and how busy they were, less this
// process's own work, over a short window; `reason` says what was read, for stderr. When not one
// CPU is free (other programs want more than the machine has), a thread per CPU: the scheduler
// shares CPUs per thread, and fewer threads would only get a smaller share.
//
//   ThreadsChoice c = choose_threads_auto(*system_cpu_reader());
//   fmt::print(stderr, "{}\n", c.reason);

#include <chrono>
#include <string>

#include "core/cpu_readings.h"

namespace strata {

struct ThreadsChoice {
    int threads = 1;
    std::string reason;
};

// How long the CPUs' load is watched: /proc/stat counts in ticks of 10 ms, so 100 ms resolves a
// tenth of a core, at 100 ms of start-up time.
inline constexpr std::chrono::milliseconds kThreadsAutoWindow{100};

ThreadsChoice choose_threads_auto(CpuReader& reader, std::chrono::milliseconds window = kThreadsAutoWindow);

}  // namespace strata
