// The avx2 dot kernels, one row per type. Kernel bodies live in dot_<family>_avx2.cpp files,
// compiled with avx2 enabled; this file only lists them (and is compiled like them, so the table
// itself is plain data with no avx2 code of its own).
#include "quant/cpu/dot_kernels.h"
#include "quant/cpu/dot_kernels_avx2.h"

namespace strata {

namespace {
constexpr DotKernel kKernels[] = {
    // K-quant, legacy and MXFP4 kernels (dot_kquants_avx2.cpp, dot_legacy_avx2.cpp)
    // IQ kernels (dot_iq_avx2.cpp)
    {TensorType::F32, nullptr},  // placeholder so the table is never empty; skipped by lookups
};
}  // namespace

const DotKernel* avx2_dot_kernels(size_t* count) {
    *count = sizeof(kKernels) / sizeof(kKernels[0]);
    return kKernels;
}

}  // namespace strata
