#include "quant/cpu/cpu_features.h"

namespace strata {

namespace {
SimdLevel detect() {
#if defined(__x86_64__) || defined(_M_X64)
#if defined(__GNUC__)
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512vnni");
    if (avx512) return SimdLevel::Avx512;
    if (avx2) return SimdLevel::Avx2;
#endif
#endif
    return SimdLevel::Scalar;
}
}  // namespace

SimdLevel cpu_simd_level() {
    static const SimdLevel level = detect();
    return level;
}

std::string_view simd_level_name(SimdLevel level) {
    switch (level) {
        case SimdLevel::Avx512: return "avx512";
        case SimdLevel::Avx2: return "avx2";
        default: return "scalar";
    }
}

}  // namespace strata
