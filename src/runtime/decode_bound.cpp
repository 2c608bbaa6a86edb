#include "runtime/decode_bound.h"

#include <algorithm>

namespace strata {

Result<DecodeBound> decode_bound_beside(std::span<const double> rates, std::span<const double> probes, uint64_t bytes_per_token) {
    if (rates.empty()) return Status::error("no repetitions to set against the bound");
    if (probes.size() != rates.size() + 1) {
        return Status::error("{} bandwidth probes for {} repetitions: expected one before the first and one after each",
                             probes.size(), rates.size());
    }
    if (bytes_per_token == 0) return Status::error("a decode bound needs the bytes one token reads");
    DecodeBound b;
    for (size_t i = 0; i < rates.size(); ++i) {
        const double beside = std::max(probes[i], probes[i + 1]);
        if (!(beside > 0)) return Status::error("bandwidth probe {} or {} measured nothing", i, i + 1);
        const double bound = beside / static_cast<double>(bytes_per_token);
        b.bound_tokens_per_second.push_back(bound);
        b.ratios.push_back(rates[i] / bound);
    }
    std::vector<double> sorted = b.ratios;
    std::sort(sorted.begin(), sorted.end());
    const size_t mid = sorted.size() / 2;
    b.median_ratio = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    return b;
}

}  // namespace strata
