// The verdict and report pieces of the GPU op self-test (runtime/gpu_op_selftest.h), built with
// and without a GPU backend; the cases themselves are in gpu_op_selftest_with_gpu.cpp.
#include "runtime/gpu_op_selftest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata {

bool GpuOpSelftestReport::passed() const {
    return std::all_of(checks.begin(), checks.end(), [](const GpuOpCheck& c) { return c.passed; });
}

namespace {
bool within(double nmse, double threshold) { return !std::isnan(nmse) && nmse <= threshold; }
}  // namespace

GpuOpCheck make_gpu_op_check(std::string name, double threshold, const std::vector<GpuOpCase>& cases,
                             const std::string& error) {
    GpuOpCheck c;
    c.name = std::move(name);
    c.threshold = threshold;
    c.passed = error.empty() && !cases.empty();
    std::vector<std::string> parts;
    for (const GpuOpCase& k : cases) {
        // NaN is the worst a case can be: it wins every comparison for the reported maximum.
        if (std::isnan(k.nmse) || (!std::isnan(c.nmse) && k.nmse > c.nmse)) c.nmse = k.nmse;
        const bool ok = within(k.nmse, threshold);
        c.passed = c.passed && ok;
        parts.push_back(fmt::format("{} {:.1e}{}", k.label, k.nmse, ok ? "" : " (over)"));
    }
    c.detail = fmt::format("nmse {:.1e} (limit {:.0e}): {}", c.nmse, threshold, fmt::join(parts, ", "));
    if (cases.empty()) c.detail = fmt::format("no case ran (limit {:.0e})", threshold);
    if (!error.empty()) c.detail += "; " + error;
    return c;
}

GpuOpCheck failed_gpu_op_check(std::string name, double threshold, const std::string& why) {
    GpuOpCheck c;
    c.name = std::move(name);
    c.threshold = threshold;
    c.nmse = std::numeric_limits<double>::quiet_NaN();
    c.passed = false;
    c.detail = why;
    return c;
}

}  // namespace strata
