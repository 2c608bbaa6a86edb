#pragma once
// How a multi-row kernel walks any number of rows: blocks of four through the 4-row instance,
// then the remaining one to three rows through the instance of that size. A kernel whose 4-row
// instance runs out of registers can walk in groups of two instead (kGroup = 2).
// `Kernel<R, T>::run(w, stride, a, n, out, out_stride)` computes R rows against T activation rows
// (a[t]: Q8_K blocks), out[t * out_stride + r]; every instance gives each pair the same bits as
// the single-row kernel, so where a pair falls in the walk does not change its result.
// Header-only so each ISA file instantiates it with its own flags; it contains no SIMD itself.

#include <algorithm>
#include <cstdint>

#include "quant/q8_k.h"

namespace strata {

// In an unnamed namespace, so that each ISA's file gets its own copy: GCC 12 gives an
// instantiation whose template template argument comes from a file's unnamed namespace (each
// kernel file's Q4K, ...) external, weak linkage under the same name in every file, and the linker
// kept one of the avx2 and avx512 walks for both tables (the avx512 tiles ran the avx2 kernels).
namespace {

template <template <int, int> class Kernel, int kGroup = 4>
void run_rows(const void* weights, uint64_t stride, const void* activation, int64_t n, int64_t rows, float* out) {
    static_assert(kGroup >= 1 && kGroup <= 4, "tails of up to three rows are handled below");
    const auto* w = static_cast<const uint8_t*>(weights);
    auto at = [&](int64_t r) { return w + static_cast<uint64_t>(r) * stride; };
    const BlockQ8_K* a[1] = {static_cast<const BlockQ8_K*>(activation)};
    int64_t r = 0;
    for (; r + kGroup <= rows; r += kGroup) Kernel<kGroup, 1>::run(at(r), stride, a, n, out + r, 0);
    const int64_t tail = rows - r;  // < kGroup
    if constexpr (kGroup > 3) {
        if (tail == 3) return Kernel<3, 1>::run(at(r), stride, a, n, out + r, 0);
    }
    if constexpr (kGroup > 2) {
        if (tail == 2) return Kernel<2, 1>::run(at(r), stride, a, n, out + r, 0);
    }
    if (tail == 1) Kernel<1, 1>::run(at(r), stride, a, n, out + r, 0);
}

// Tiles (DotTileFn): the activation rows in groups of kTokens, each group against every weight
// row, one row at a time (the tiles' gain is a row's unpacking shared by the group; several rows
// at once would run out of registers). out[t * out_stride + r].
template <template <int, int> class Kernel, int kTokens = 4>
void run_tile(const void* weights, uint64_t stride, const void* const* activations, int64_t tokens, int64_t n, int64_t rows,
              float* out, int64_t out_stride) {
    static_assert(kTokens >= 1 && kTokens <= 4, "groups of up to four, with tails of one to three");
    const auto* w = static_cast<const uint8_t*>(weights);
    const auto* const* a = reinterpret_cast<const BlockQ8_K* const*>(activations);
    for (int64_t t = 0; t < tokens; t += kTokens) {
        const int64_t group = std::min<int64_t>(kTokens, tokens - t);
        float* o = out + t * out_stride;
        for (int64_t r = 0; r < rows; ++r) {
            const uint8_t* row = w + static_cast<uint64_t>(r) * stride;
            if constexpr (kTokens >= 4) {
                if (group == 4) {
                    Kernel<1, 4>::run(row, stride, a + t, n, o + r, out_stride);
                    continue;
                }
            }
            if constexpr (kTokens >= 3) {
                if (group == 3) {
                    Kernel<1, 3>::run(row, stride, a + t, n, o + r, out_stride);
                    continue;
                }
            }
            if constexpr (kTokens >= 2) {
                if (group == 2) {
                    Kernel<1, 2>::run(row, stride, a + t, n, o + r, out_stride);
                    continue;
                }
            }
            Kernel<1, 1>::run(row, stride, a + t, n, o + r, out_stride);
        }
    }
}

}  // namespace

}  // namespace strata
