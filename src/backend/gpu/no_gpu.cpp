// Builds without a GPU backend (no nvcc, STRATA_CUDA=OFF): the device runtime finds no GPU and
// says why (model/gpu/gpu_forward_without_gpu.cpp does the same for the GPU forward passes).
#include "backend/gpu/device_runtime.h"

namespace strata {

namespace gpu {
const char* runtime_name() { return nullptr; }
bool device_memory(int, uint64_t*, uint64_t*) { return false; }
bool find_devices(std::vector<DeviceInfo>* out, std::string* why) {
    out->clear();
    *why = "no GPU support in this build (configure with nvcc available, or -DSTRATA_CUDA=ON / -DSTRATA_HIP=ON)";
    return false;
}
}  // namespace gpu

}  // namespace strata
