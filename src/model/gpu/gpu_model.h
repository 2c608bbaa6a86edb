#pragma once
// Where a model runs. `load_model_on` returns a Model either way, so sessions, parity and bench
// do not care: on the GPU the weights are uploaded to VRAM once, the KV cache lives in VRAM, and
// forward() copies only token ids in and logits out. The CPU stays the default; `Auto` takes the
// GPU when this build has one, a device is present and the architecture has a GPU forward, and
// falls back to the CPU (saying why on stderr) when the GPU cannot take this model's weights.
//
//   ComputeOptions opt{.device = ComputeDevice::Gpu};
//   STRATA_ASSIGN_OR_RETURN(auto model, load_model_on(gguf, opt));
//   fmt::print("{}\n", model->device_name());      // "CUDA NVIDIA H200 (sm_90)"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cpu/cpu_tuning.h"
#include "backend/gpu/gpu_tuning.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "model/config.h"
#include "model/model.h"
#include "model/ple_table.h"

namespace strata {

enum class ComputeDevice { Cpu, Gpu, Auto };
enum class WeightsLoad { Map, Memory, Auto };

namespace gpu {
class GpuContext;
class RoutedExperts;
}  // namespace gpu
// Makes the object that computes the routed experts of a model whose experts do not all fit in
// VRAM (experts/gpu_expert_tiers.h), on the model's GPU context, once the dense weights are in.
using RoutedExpertsFactory =
    std::function<Result<std::unique_ptr<gpu::RoutedExperts>>(const GgufFile&, gpu::GpuContext&)>;

// One GPU's part of a model split by layers (--split layer), as the memory plan decided it.
struct GpuLayerShare {
    int ordinal = 0;                         // the runtime's device number
    uint32_t layer_begin = 0, layer_end = 0; // its layers: [begin, end)
    uint64_t vram_budget = 0;                // as ComputeOptions::vram_budget, for this GPU
    RoutedExpertsFactory routed_experts = nullptr;  // set: its layers' experts are tiered
};

struct ComputeOptions {
    ComputeDevice device = ComputeDevice::Cpu;
    int gpu_ordinal = 0;       // the runtime's device number
    // --load: the model file mapped, read into RAM on huge pages (gguf/reader.h), for the weights
    // the CPU reads, or (auto) read when the model runs on the CPU and fits (runtime/weights_load.h).
    WeightsLoad weights_load = WeightsLoad::Map;
    // The KV cache, on the GPU (GpuKvCache) and on the CPU alike: f16 as llama.cpp, since the
    // CPU attention reads half the bytes with the same arithmetic and measured faster (f32: exact,
    // for references; q8_0: about twice the context in the same memory).
    KvCacheType kv_type = KvCacheType::F16;
    // > 0: every byte the model allocates on the GPU counts against this (--vram-budget), so a
    // large card behaves as a smaller one.
    uint64_t vram_budget = 0;
    // Set: routed experts are not uploaded with the model; this factory's object holds them.
    RoutedExpertsFactory routed_experts = nullptr;
    // --gpus with --split layer: the GPUs to split the model over, in layer order (runtime
    // ordinals; one ordinal twice gives two shares of one card, which is how a one-GPU machine
    // tests the split), and --split-at's explicit first layers of GPUs 2..n (empty: by capacity).
    std::vector<int> split_ordinals = {};
    std::vector<uint32_t> split_at = {};
    // --split tensor with --gpus: split_ordinals share every layer instead (heads, FFN columns and
    // experts sharded, partial sums all-reduced: backend/gpu/gpu_collective.h).
    bool split_tensor = false;
    // Set by the placement from the plan: the GPUs of a tensor split, in rank order (the first
    // holds the output head), each with every layer (layer_begin 0, layer_end n_layer) and its
    // own budget; no tiers.
    std::vector<GpuLayerShare> tensor_split = {};
    // Set by the placement (runtime/gpu_placement.h) from the plan: each GPU's layers. Empty: the
    // model runs on gpu_ordinal alone.
    std::vector<GpuLayerShare> layer_split = {};
    // Switches between measured kernel paths (their defaults are the winners): the CPU's, kept by
    // the model for the contexts its passes run in (Model::cpu_tuning), and the GPU's, carried
    // by every GpuContext the model makes. Filled at the command line (cli/environment.h).
    CpuTuning cpu_tuning = {};
    gpu::GpuTuning gpu_tuning = {};
    // qwen4exp: where its n-gram table is read from (model/ple_table.h; the plan's choice when the
    // engine is assembled: RAM when there is room after the experts, else the SSD).
    PleTableOptions ple_table = {};
};

std::optional<ComputeDevice> parse_compute_device(std::string_view name);  // "cpu" | "gpu" | "auto"

// Empty when a GPU can run models here; otherwise why not ("no GPU support in this build",
// "CUDA: no usable device (...)").
std::string gpu_unavailable_reason();

Result<std::unique_ptr<Model>> load_model_on(const GgufFile& file, const ComputeOptions& options);

// The GPU forward passes (model/gpu/gpu_llama.cpp, gpu_hybrid.cpp, gpu_deepseek2.cpp,
// gpu_qwen4exp.cpp; an error in builds without a GPU): the Llama family with gpt-oss, qwen3next /
// qwen35moe, deepseek2 and qwen4exp.
Result<std::unique_ptr<Model>> load_gpu_llama_family(const GgufFile& file, const ModelConfig& config,
                                                     const ComputeOptions& options);
Result<std::unique_ptr<Model>> load_gpu_hybrid(const GgufFile& file, const ModelConfig& config,
                                               const ComputeOptions& options);
Result<std::unique_ptr<Model>> load_gpu_deepseek2(const GgufFile& file, const ModelConfig& config,
                                                  const ComputeOptions& options);
Result<std::unique_ptr<Model>> load_gpu_qwen4exp(const GgufFile& file, const ModelConfig& config,
                                                 const ComputeOptions& options);

}  // namespace strata
