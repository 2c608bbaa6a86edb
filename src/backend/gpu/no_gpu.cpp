// Builds without a GPU backend (no nvcc, STRATA_CUDA=OFF): every GPU entry point says so.
#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_model.h"

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

namespace {
Status no_gpu() {
    std::vector<gpu::DeviceInfo> devices;
    std::string why;
    gpu::find_devices(&devices, &why);
    return Status::error_message(why);
}
}  // namespace

Result<std::unique_ptr<Model>> load_gpu_llama_family(const GgufFile&, const ModelConfig&, const ComputeOptions&) {
    return no_gpu();
}
Result<std::unique_ptr<Model>> load_gpu_hybrid(const GgufFile&, const ModelConfig&, const ComputeOptions&) {
    return no_gpu();
}
Result<std::unique_ptr<Model>> load_gpu_deepseek2(const GgufFile&, const ModelConfig&, const ComputeOptions&) {
    return no_gpu();
}

}  // namespace strata
