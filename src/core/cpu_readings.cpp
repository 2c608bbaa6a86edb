#include "core/cpu_readings.h"

#include <sstream>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#endif

namespace strata {

std::map<int, CpuTicks> parse_proc_stat(const std::string& text) {
    std::map<int, CpuTicks> out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        // "cpu3 ..." but not the machine's sum "cpu  ..."
        if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9') continue;
        std::istringstream fields(line.substr(3));
        int cpu = -1;
        fields >> cpu;
        CpuTicks ticks;
        uint64_t value = 0;
        for (int i = 0; fields >> value; ++i) {
            // user nice system idle iowait irq softirq steal guest guest_nice: guest time is
            // already counted in user and nice.
            if (i >= 8) break;
            ticks.total += value;
            if (i == 3 || i == 4) ticks.idle += value;
        }
        if (cpu >= 0) out[cpu] = ticks;
    }
    return out;
}

namespace {

class SystemCpuReader final : public CpuReader {
public:
    int hardware_threads() override {
        const unsigned n = std::thread::hardware_concurrency();
        return n == 0 ? 1 : static_cast<int>(n);
    }

    std::optional<std::vector<int>> allowed_cpus() override {
#if defined(__linux__)
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::nullopt;
        std::vector<int> cpus;
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
        }
        if (cpus.empty()) return std::nullopt;
        return cpus;
#else
        return std::nullopt;
#endif
    }

    std::optional<std::map<int, CpuTicks>> cpu_ticks() override {
#if defined(__linux__)
        std::ifstream in("/proc/stat");
        if (!in) return std::nullopt;
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto ticks = parse_proc_stat(text);
        if (ticks.empty()) return std::nullopt;
        return ticks;
#else
        return std::nullopt;
#endif
    }

    double process_cpu_seconds() override {
#if defined(__linux__)
        timespec ts{};
        if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0.0;
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
#else
        return 0.0;
#endif
    }

    double ticks_per_second() override {
#if defined(__linux__)
        const long hz = sysconf(_SC_CLK_TCK);
        return hz > 0 ? static_cast<double>(hz) : 100.0;
#else
        return 100.0;
#endif
    }

    void pause(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
};

}  // namespace

std::unique_ptr<CpuReader> system_cpu_reader() { return std::make_unique<SystemCpuReader>(); }

}  // namespace strata
