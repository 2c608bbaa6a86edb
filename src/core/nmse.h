#pragma once
// Normalized mean squared error, Σ(got − want)² / Σ want², the measure every comparison of a GPU
// op with its CPU reference uses (the op-parity tests, `strata devices --selftest`). Sums in
// double; NaN when the sizes differ; the plain squared error when want is all zeros.
#include <cstddef>
#include <limits>
#include <span>

namespace strata {

inline double normalized_mse(std::span<const float> got, std::span<const float> want) {
    if (got.size() != want.size()) return std::numeric_limits<double>::quiet_NaN();
    double err = 0.0, norm = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double d = static_cast<double>(got[i]) - want[i];
        err += d * d;
        norm += static_cast<double>(want[i]) * want[i];
    }
    return norm > 0 ? err / norm : err;
}

}  // namespace strata
