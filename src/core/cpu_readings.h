#pragma once
// What the operating system says about the CPUs this process may use, behind an interface so
// that the choice of a thread count (core/threads_auto.h) can be tested on recorded readings.
// The machine's reader asks sched_getaffinity and /proc/stat (Linux); elsewhere it knows only
// the hardware thread count, and the choice falls back to it.
//
//   auto reader = system_cpu_reader();
//   auto before = reader->cpu_times();  reader->pause(std::chrono::milliseconds(100));
//   auto after = reader->cpu_times();

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata {

// One CPU's time since boot, in the kernel's clock ticks: idle (idle and waiting for I/O, time
// another program could have had) and the total of every state.
struct CpuTicks {
    uint64_t idle = 0;
    uint64_t total = 0;
};

class CpuReader {
public:
    virtual ~CpuReader() = default;
    virtual int hardware_threads() = 0;
    // The CPU numbers this process may run on (its affinity mask); nullopt when unknown.
    virtual std::optional<std::vector<int>> allowed_cpus() = 0;
    // Every CPU's ticks by CPU number; nullopt when unknown.
    virtual std::optional<std::map<int, CpuTicks>> cpu_ticks() = 0;
    // CPU time this process has used, in seconds (to leave its own work out of "busy").
    virtual double process_cpu_seconds() = 0;
    // Clock ticks per second of cpu_ticks().
    virtual double ticks_per_second() = 0;
    // Waits between two readings.
    virtual void pause(std::chrono::milliseconds duration) = 0;
};

std::unique_ptr<CpuReader> system_cpu_reader();

// Parses the per-CPU lines ("cpuN user nice system idle iowait irq softirq steal ...") of
// /proc/stat's text; the all-CPU line ("cpu ...") and other lines are skipped.
std::map<int, CpuTicks> parse_proc_stat(const std::string& text);

}  // namespace strata
