#pragma once
// `strata devices --selftest`, after the memory checks (device/selftest.h): one tiny case of each
// GPU op family, on small random inputs from a fixed seed, compared with the CPU reference op by
// normalized mean squared error, Σ(gpu − cpu)² / Σ cpu², against the family's threshold — the
// method and thresholds of the op-parity suite (tests/gpu/op_parity.h), in seconds instead of
// minutes, so a user sees that the kernels this build ships compute right on their card.
// Families: quantized matmul (Q4_K, Q6_K, Q8_0, F16: a decode row through the int8 kernel and
// the float kernel, a 40-token batch through the tiled kernel), RMS norm, rope, MoE routing
// (softmax top-k, one token and a batch) and its expert matmuls through the plans, attention over
// an f16 KV cache (decode over 300 keys, a 40-token prompt batch).
//
// Lives in runtime/ because it needs both backends; device/ stays below them. Built with a GPU
// backend by gpu_op_selftest_with_gpu.cpp; without one, gpu_op_selftest_without_gpu.cpp reports
// the run as skipped ("built without a GPU backend").
//
//   GpuOpSelftestReport ops = run_gpu_op_selftest({.ordinal = 0, .runtime = "cuda"});
//   if (!ops.ran) fmt::print("skip GPU ops: {}\n", ops.skipped_reason);
//   for (const GpuOpCheck& c : ops.checks) fmt::print("{} {}: {}\n", c.passed ? "ok" : "FAIL", c.name, c.detail);

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace strata {

// One family's verdict: the worst NMSE over its cases, against one threshold.
struct GpuOpCheck {
    std::string name;       // "matmul Q4_K [512 -> 96]", "attention f16 KV", ...
    bool passed = false;
    double nmse = 0.0;      // the worst case's (NaN when a case produced NaN)
    double threshold = 0.0; // the largest NMSE that passes
    std::string detail;     // "nmse 2.1e-06 (limit 5e-04): decode int8 2.1e-06, ..." or what went wrong
};

struct GpuOpCase {
    std::string label;  // "decode int8", "batch 40 tiled", ...
    double nmse = 0.0;
};

struct GpuOpSelftestOptions {
    int ordinal = 0;          // the runtime's device number (as --device resolves it)
    std::string runtime;      // "cuda" or "hip" (device/device.h backend_name); empty: whatever this build has
    uint32_t seed = 20240607; // inputs are the same on every run and every machine
    int cpu_threads = 4;      // for the CPU reference ops
};

struct GpuOpSelftestReport {
    bool ran = false;            // false: skipped, skipped_reason says why, checks is empty
    std::string skipped_reason;  // "built without a GPU backend (...)", "no CUDA device ..."
    std::vector<GpuOpCheck> checks;
    // Every check passed; a skipped run passes (it found nothing wrong).
    bool passed() const;
};

// Runs every family on the device; checks run even after one fails, so one report shows all
// that is wrong. A launch the runtime rejects aborts with the runtime's words (STRATA_GPU_CHECK),
// so callers flush what they have printed before calling this.
GpuOpSelftestReport run_gpu_op_selftest(const GpuOpSelftestOptions& options);

// ---- pieces shared by both builds (and unit-tested without a GPU) ------------------------------
// A family's check from its cases: passed when every case's NMSE is a number at most threshold
// and `error` is empty (a failure found besides the NMSE, such as different expert ids).
GpuOpCheck make_gpu_op_check(std::string name, double threshold, const std::vector<GpuOpCase>& cases,
                             const std::string& error = {});
// The check of a family that could not run (no device memory, a type without a kernel).
GpuOpCheck failed_gpu_op_check(std::string name, double threshold, const std::string& why);

}  // namespace strata
