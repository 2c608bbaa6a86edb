#pragma once
// How a multi-row kernel walks any number of rows: blocks of four through the 4-row instance,
// then the remaining one to three rows through the instance of that size. A kernel whose 4-row
// instance runs out of registers can walk in groups of two instead (kGroup = 2). `Kernel<R>::run(w,
// stride, a, n, out)` computes R rows; every instance gives each row the same bits as the
// single-row kernel, so where a row falls in the walk does not change its result.
// Header-only so each ISA file instantiates it with its own flags; it contains no SIMD itself.

#include <cstdint>

namespace strata {

template <template <int> class Kernel, int kGroup = 4>
void run_rows(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows, float* out) {
    static_assert(kGroup >= 1 && kGroup <= 4, "tails of up to three rows are handled below");
    const auto* w = static_cast<const uint8_t*>(weights);
    auto at = [&](int64_t r) { return w + static_cast<uint64_t>(r) * stride; };
    int64_t r = 0;
    for (; r + kGroup <= rows; r += kGroup) Kernel<kGroup>::run(at(r), stride, activation, n, out + r);
    const int64_t tail = rows - r;  // < kGroup
    if constexpr (kGroup > 3) {
        if (tail == 3) return Kernel<3>::run(at(r), stride, activation, n, out + r);
    }
    if constexpr (kGroup > 2) {
        if (tail == 2) return Kernel<2>::run(at(r), stride, activation, n, out + r);
    }
    if (tail == 1) Kernel<1>::run(at(r), stride, activation, n, out + r);
}

}  // namespace strata
