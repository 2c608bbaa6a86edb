#pragma once
// How many of the next layer's predicted misses a decode step copies ahead (GPU expert tiers,
// gpu_tiers_link_with_gpu.cpp), from measured costs. Free of GPU code and tested on any machine
// (tests/experts/copies_ahead_test.cpp).
//
// The link copies ahead through a whole layer, while that layer's CPU lane and then the serial
// chain (the combine, attention and router up to the next routing) run. The next layer's misses
// that are not copied ahead go to its CPU lane (or stream during its step). A copy ahead pays
// while the link's time for the copies stays within the chain plus the CPU's time for the rest:
//     a · link_s ≤ chain_s + (misses − a) · cpu_s   ⇔   a ≤ (chain_s + misses · cpu_s) / (link_s + cpu_s)
// rounded down (a link that is still busy when the next layer needs the copies delays its GPU
// part, which every later layer then waits behind). With the synthetic Qwen3-30B-A3B on an H200
// this gives 3 with every expert in RAM (8 misses), 2 at a 10 GiB budget (~4), 1 at 16 GiB (~1):
// measured best, or as good as the best (bench/results/2026-12-01-chain-signals).
//
//   const uint32_t n = copies_ahead_for(chain_s, lanes.cpu_expert_s(), expert_bytes / link_bps, misses, cap);

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace strata {

// chain_s: the serial chain per layer; cpu_expert_s: one expert for one token on the CPU;
// link_expert_s: one expert's copy; predicted_misses: the next layer's predicted experts that are
// not in VRAM; cap: the most the caller allows (--expert-prefetch).
inline uint32_t copies_ahead_for(double chain_s, double cpu_expert_s, double link_expert_s, uint32_t predicted_misses,
                                 uint32_t cap) {
    const uint32_t most = std::min(cap, predicted_misses);
    if (!(link_expert_s > 0) || !(cpu_expert_s >= 0) || !(chain_s >= 0)) return most;  // nothing measured: the cap
    const double fit = (chain_s + static_cast<double>(predicted_misses) * cpu_expert_s) / (link_expert_s + cpu_expert_s);
    return std::min(most, static_cast<uint32_t>(std::max(0.0, std::floor(fit))));
}

}  // namespace strata
