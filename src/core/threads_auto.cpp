#include "core/threads_auto.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace strata {

ThreadsChoice choose_threads_auto(CpuReader& reader, std::chrono::milliseconds window) {
    std::vector<int> allowed;
    if (auto cpus = reader.allowed_cpus(); cpus && !cpus->empty()) {
        allowed = std::move(*cpus);
    } else {
        allowed.resize(static_cast<size_t>(std::max(1, reader.hardware_threads())));
        std::iota(allowed.begin(), allowed.end(), 0);
    }
    const int n_allowed = static_cast<int>(allowed.size());
    const auto every_cpu = [&](const std::string& why) {
        return ThreadsChoice{n_allowed, fmt::format("--threads auto: {} thread{}, one per CPU this process may use ({})", n_allowed,
                                                    n_allowed == 1 ? "" : "s", why)};
    };

    const auto before = reader.cpu_ticks();
    const double own_before = reader.process_cpu_seconds();
    reader.pause(window);
    const auto after = reader.cpu_ticks();
    const double own_after = reader.process_cpu_seconds();
    if (!before || !after) return every_cpu("the CPUs' load is unknown");

    // Busy CPUs over the window, in CPUs: each allowed CPU's share of non-idle ticks.
    double busy = 0.0, ticks = 0.0;
    int measured = 0;
    for (int cpu : allowed) {
        const auto b = before->find(cpu), a = after->find(cpu);
        if (b == before->end() || a == after->end() || a->second.total <= b->second.total) continue;
        const double total = static_cast<double>(a->second.total - b->second.total);
        const double idle = static_cast<double>(a->second.idle >= b->second.idle ? a->second.idle - b->second.idle : 0);
        busy += std::clamp(1.0 - idle / total, 0.0, 1.0);
        ticks += total;
        ++measured;
    }
    if (measured == 0) return every_cpu("no ticks counted on its CPUs");
    // The window's length as the kernel counted it (every CPU's ticks advance together), to turn
    // this process's CPU seconds into CPUs.
    const double seconds = ticks / measured / std::max(1.0, reader.ticks_per_second());
    const double own = seconds > 0 ? std::max(0.0, own_after - own_before) / seconds : 0.0;
    const double others = std::clamp(busy - own, 0.0, static_cast<double>(n_allowed));
    const double free = n_allowed - others;
    if (free < 1.0) {
        // Not one CPU free: the scheduler shares the CPUs per runnable thread, so a thread per
        // CPU takes the larger share, and a late thread holds no call up (its range is taken).
        // On 2 cores with compilers and a burner running, 2 threads decoded 2.2x faster than 1
        // (bench/results/2026-12-07-cpu-contention).
        return ThreadsChoice{n_allowed, fmt::format("--threads auto: {} thread{}, one per CPU this process may use: {:.1f} of "
                                                    "{} busy with other programs over the last {} ms, none free, so the "
                                                    "CPUs are shared",
                                                    n_allowed, n_allowed == 1 ? "" : "s", others, n_allowed, window.count())};
    }
    const int threads = std::clamp(static_cast<int>(std::lround(free)), 1, n_allowed);
    return ThreadsChoice{threads, fmt::format("--threads auto: {} thread{}: {} CPU{} this process may use, {:.1f} of them busy with "
                                              "other programs over the last {} ms",
                                              threads, threads == 1 ? "" : "s", n_allowed, n_allowed == 1 ? "" : "s", others,
                                              window.count())};
}

}  // namespace strata
