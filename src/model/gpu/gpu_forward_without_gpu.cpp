// Builds without a GPU backend: every GPU forward pass is an error that says why.
#include "backend/gpu/device_runtime.h"
#include "model/gpu/gpu_model.h"

namespace strata {

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
Result<std::unique_ptr<Model>> load_gpu_qwen4exp(const GgufFile&, const ModelConfig&, const ComputeOptions&) {
    return no_gpu();
}

}  // namespace strata
