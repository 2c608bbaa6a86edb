// Device selection for models (model/gpu/gpu_model.h); compiled in every build.
#include "model/gpu/gpu_model.h"

#include <fmt/format.h>

#include <cstdio>
#include <vector>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"

namespace strata {

std::optional<ComputeDevice> parse_compute_device(std::string_view name) {
    if (name == "cpu") return ComputeDevice::Cpu;
    if (name == "gpu" || name == "cuda" || name == "hip") return ComputeDevice::Gpu;
    if (name == "auto") return ComputeDevice::Auto;
    return std::nullopt;
}

std::string gpu_unavailable_reason() {
    std::vector<gpu::DeviceInfo> devices;
    std::string why;
    return gpu::find_devices(&devices, &why) ? std::string() : why;
}

namespace {
Result<std::unique_ptr<Model>> load_gpu_forward(ArchFamily family, const GgufFile& file, const ModelConfig& config,
                                                const ComputeOptions& options) {
    // The attention kernels hold a head in registers and shared memory up to kGpuMaxHeadDim
    // values; a wider head, which a valid GGUF may have, is refused here with the way out instead
    // of an internal error at the first step. (DeepSeek's latent attention has kernels and limits
    // of its own; qwen4exp checks its heads with its indexer's.)
    const bool plain_attention = family == ArchFamily::Llama || family == ArchFamily::GptOss || family == ArchFamily::Hybrid;
    if (plain_attention && (config.head_dim_k > gpu::kGpuMaxHeadDim || config.head_dim_v > gpu::kGpuMaxHeadDim)) {
        return Status::error("{}: attention heads of {} (keys) and {} (values) values; the GPU attention takes at most {} "
                             "(run with --device cpu)",
                             file.path(), config.head_dim_k, config.head_dim_v, gpu::kGpuMaxHeadDim);
    }
    switch (family) {
        case ArchFamily::Llama:
        case ArchFamily::GptOss: return load_gpu_llama_family(file, config, options);
        case ArchFamily::Deepseek2: return load_gpu_deepseek2(file, config, options);
        case ArchFamily::Hybrid: return load_gpu_hybrid(file, config, options);
        case ArchFamily::Qwen4Exp: return load_gpu_qwen4exp(file, config, options);
        case ArchFamily::Deepseek4: break;  // no GPU forward pass yet (the row's gpu_forward is false)
    }
    return Status::error("{}: no GPU forward pass for architecture {}", file.path(), config.arch_name());
}

Result<std::unique_ptr<Model>> load_on_cpu(const GgufFile& file, const ComputeOptions& options) {
    STRATA_ASSIGN_OR_RETURN(auto model, Model::load(file));
    const ModelConfig& c = model->config();
    if (!kv_type_fits(options.kv_type, c.head_dim_k, c.head_dim_v)) {
        return Status::error("--kv-type q8_0: this model's attention heads ({} and {} values) are not whole 32-value "
                             "blocks; use --kv-type f16",
                             c.head_dim_k, c.head_dim_v);
    }
    model->set_kv_type(options.kv_type);
    STRATA_TRY(model->place_ple_table(file, options.ple_table));
    return model;
}

Result<std::unique_ptr<Model>> load_on_device(const GgufFile& file, const ComputeOptions& options) {
    if (options.device == ComputeDevice::Cpu) return load_on_cpu(file, options);
    if (options.split_ordinals.size() >= 2 && options.layer_split.empty() && options.tensor_split.empty()) {
        return Status::error("--gpus: a split is loaded as the memory plan decides it (place_on_gpu first)");
    }
    STRATA_ASSIGN_OR_RETURN(ModelConfig config, ModelConfig::from_gguf(file));
    const std::string why = gpu_unavailable_reason();
    const ArchitectureInfo& arch = architecture(config.arch);
    const bool arch_ok = arch.traits.gpu_forward;
    if (options.device == ComputeDevice::Auto && (!why.empty() || !arch_ok)) return load_on_cpu(file, options);
    if (!kv_type_fits(options.kv_type, config.head_dim_k, config.head_dim_v)) {
        return Status::error("--kv-type q8_0: this model's attention heads ({} and {} values) are not whole 32-value "
                             "blocks; use --kv-type f16",
                             config.head_dim_k, config.head_dim_v);
    }
    if (!why.empty()) return Status::error("--device gpu: {} (run with --device cpu)", why);
    if (!arch_ok) {
        return Status::error("--device gpu: architecture {} has no GPU forward pass yet (supported: {}); run with "
                             "--device cpu",
                             arch.name, architecture_names(/*gpu_only=*/true));
    }
    auto gpu_model = load_gpu_forward(arch.family, file, config, options);
    if (gpu_model) STRATA_TRY((*gpu_model)->place_ple_table(file, options.ple_table));
    if (gpu_model || options.device != ComputeDevice::Auto) return gpu_model;
    // Auto: a model the GPU cannot take yet (a weight type without a kernel, too little VRAM)
    // still runs, on the CPU, and the user learns why.
    fmt::print(stderr, "strata: running on the CPU: {}\n", gpu_model.status().message());
    return load_on_cpu(file, options);
}

}  // namespace

Result<std::unique_ptr<Model>> load_model_on(const GgufFile& file, const ComputeOptions& options) {
    STRATA_ASSIGN_OR_RETURN(auto model, load_on_device(file, options));
    model->set_cpu_tuning(options.cpu_tuning);
    return model;
}

}  // namespace strata
