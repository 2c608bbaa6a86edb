// Builds without a GPU backend have no kernels to check (runtime/gpu_op_selftest.h): the op
// self-test is skipped, with the reason; its twin gpu_op_selftest_with_gpu.cpp runs the cases.
#include "runtime/gpu_op_selftest.h"

namespace strata {

GpuOpSelftestReport run_gpu_op_selftest(const GpuOpSelftestOptions&) {
    GpuOpSelftestReport report;
    report.ran = false;
    report.skipped_reason =
        "built without a GPU backend (configure with nvcc available, or -DSTRATA_CUDA=ON / -DSTRATA_HIP=ON)";
    return report;
}

}  // namespace strata
