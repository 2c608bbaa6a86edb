#pragma once
// `strata devices --selftest`: a short check of the chosen GPU through its runtime's memory API,
// before a long model load finds a broken card or driver: memory reported, allocations aligned,
// an impossible allocation refused cleanly (and the runtime still usable after it), what fresh
// memory holds, and host->device->host round trips from pageable and pinned memory that must
// come back bit-identical, with their bandwidth. Written against GpuMemoryApi, so a fake in host
// memory tests every verdict here without a GPU.
//
//   auto api = open_gpu_memory_api(device.vendor, *device.runtime_ordinal);
//   SelftestReport report = run_memory_selftest(**api, {.copy_bytes = 256 << 20});
//   for (const SelftestCheck& c : report.checks) fmt::print("{} {}: {}\n", c.passed ? "ok" : "FAIL", c.name, c.detail);

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device/gpu_memory_api.h"

namespace strata {

struct SelftestOptions {
    size_t copy_bytes = size_t{256} << 20;  // per round trip: large enough to reach the link's rate
    int repeats = 3;                        // the best of these is the bandwidth reported
};

struct SelftestCheck {
    std::string name;    // "alignment", "pinned round trip", ...
    bool passed = false;
    std::string detail;  // what was measured, or what went wrong
};

struct SelftestReport {
    std::vector<SelftestCheck> checks;
    bool passed() const;
};

// Every check runs even when an earlier one fails, so one report shows all that is wrong.
SelftestReport run_memory_selftest(GpuMemoryApi& api, const SelftestOptions& options);

// Bytes and rates for the report: "256 MiB", "12.3 GB/s" (decimal, as link speeds are quoted).
std::string selftest_size_text(uint64_t bytes);
std::string selftest_rate_text(uint64_t bytes, double seconds);

}  // namespace strata
