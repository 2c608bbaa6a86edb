#pragma once
// Marks a function that both host code (g++) and kernels (nvcc, clang -x hip) call, for the few
// formulas that must be the same on both sides. No vendor header is needed: the compilers that
// build kernels know the attributes.
#if defined(__CUDACC__) || defined(__HIP__)
#define STRATA_HOST_DEVICE __host__ __device__
#else
#define STRATA_HOST_DEVICE
#endif
