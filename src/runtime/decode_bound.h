#pragma once
// A decode benchmark's speed against the memory-bandwidth bound measured beside each repetition.
// On a machine shared with other tenants the DRAM bandwidth left to us moves by a third within a
// minute (bench/results/2026-12-01-cpu-decode-stream), so one probe before all repetitions can
// fall in a quiet moment while they run in a busy one, or the other way round. The probe runs
// before the first repetition and after each, and repetition i is set against the faster of the
// passes on either side of it: the best the memory gave while it ran.
//
//   DecodeBound b = decode_bound_beside(rates, probe_bytes_per_second, bytes_per_token);
//   b.median_ratio  // e.g. 0.68: the middle repetition decoded at 68% of its bound

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"

namespace strata {

struct DecodeBound {
    std::vector<double> bound_tokens_per_second;  // per repetition
    std::vector<double> ratios;                   // per repetition: tokens per second / bound
    double median_ratio = 0;
};

// rates: tokens per second of each repetition; probes: bytes per second before the first
// repetition and after each (one more than rates); bytes_per_token: what one token reads.
Result<DecodeBound> decode_bound_beside(std::span<const double> rates, std::span<const double> probes, uint64_t bytes_per_token);

}  // namespace strata
