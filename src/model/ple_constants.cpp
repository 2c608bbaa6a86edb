#include "model/ple_constants.h"

#include <limits>

namespace strata {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// splitmix64 as HF's _splitmix64 writes it (arithmetic mod 2^64).
uint64_t splitmix64(uint64_t v) {
    v += kGolden;
    v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9ull;
    v = (v ^ (v >> 27)) * 0x94D049BB133111EBull;
    return v ^ (v >> 31);
}

bool is_prime(uint64_t n) {
    if (n < 2) return false;
    if (n % 2 == 0) return n == 2;
    for (uint64_t d = 3; d * d <= n; d += 2) {
        if (n % d == 0) return false;
    }
    return true;
}

}  // namespace

PleConstants ple_constants(const PleConstantsSpec& s) {
    PleConstants c;
    const uint64_t vocab = s.vocab == 0 ? 1 : s.vocab;
    const uint64_t multiplier_max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / vocab;
    const uint64_t half = multiplier_max / 2 > 1 ? multiplier_max / 2 : 1;
    const uint64_t base_seed = s.seed + 10007ull * s.ple_layer_index;
    for (uint32_t i = 0; i < s.ngram_size; ++i) {
        c.multipliers.push_back(2 * (splitmix64(base_seed + kGolden * (i + 1)) % half) + 1);
    }
    // Head h takes the (ple_layer_index·heads + h + 1)-th prime at or after ngram_base.
    const uint32_t heads = s.ngram_size > 1 ? (s.ngram_size - 1) * s.heads_per_ngram : 0;
    uint64_t candidate = s.ngram_base < 2 ? 2 : s.ngram_base;
    uint32_t skip = s.ple_layer_index * heads;
    uint64_t offset = 0;
    while (c.head_sizes.size() < heads) {
        if (is_prime(candidate)) {
            if (skip > 0) {
                --skip;
            } else {
                c.head_offsets.push_back(offset);
                c.head_sizes.push_back(candidate);
                offset += candidate;
            }
        }
        ++candidate;
    }
    const uint64_t m = s.rows_multiple == 0 ? 1 : s.rows_multiple;
    c.rows = (offset + m - 1) / m * m;
    return c;
}

uint64_t ple_base_for_rows(PleConstantsSpec spec, uint64_t max_rows) {
    const uint32_t heads = spec.ngram_size > 1 ? (spec.ngram_size - 1) * spec.heads_per_ngram : 1;
    const auto fits = [&](uint64_t base) {
        spec.ngram_base = base;
        return ple_constants(spec).rows <= max_rows;
    };
    // The rows grow with the base, and `heads` primes from b sum to at least heads·b: binary search
    // for the last base that fits in [2, max_rows / heads].
    uint64_t lo = 2, hi = max_rows / heads + 1;
    if (!fits(lo)) return 0;
    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

}  // namespace strata
