#pragma once
// The hook through which a GPU forward hands a MoE layer's routed experts to whoever holds them
// when they are not all in VRAM (experts/gpu_expert_tiers.h: VRAM slots, pinned RAM, the mapped
// file, CPU workers). The forward computes the norm, the router and the top-k selection on the
// GPU, then calls forward(); the implementation adds Σ weight · expert(h) to the residual x, on
// the context's stream, by whatever mix of GPU kernels, copies and CPU work it chooses.
//
//   ComputeOptions opt;
//   opt.routed_experts = [&](const GgufFile& f, gpu::GpuContext& g) { return make_tiers(f, g, ...); };
//   auto model = load_model_on(gguf, opt);   // routed experts are not uploaded with the model

#include <cstdint>

#include "backend/cpu/cpu_context.h"
#include "backend/gpu/device_runtime.h"
#include "core/function_ref.h"

namespace strata::gpu {

struct GpuQ8Rows;  // gpu_ops.h

struct RoutedExpertsStep {
    int64_t layer = 0;        // model layer index (blk.N)
    int64_t n_tokens = 0;
    int64_t n_embd = 0;
    int64_t k = 0;            // experts per token
    const float* h = nullptr;         // device, n_tokens rows of n_embd: the normed input
    const GpuQ8Rows* hq = nullptr;    // h as int8 (gpu_quantize_q8) when the step takes int8 kernels, else null
    const int32_t* ids = nullptr;     // device, n_tokens rows of k expert indices
    const float* weights = nullptr;   // device, n_tokens rows of k combine weights
    float* x = nullptr;               // device residual stream, rows of n_embd: x += Σ w · expert(h)
    // Then h_next = rms_norm(x) · next_norm (the next block's input), fused with the combine of the
    // GPU's experts as the all-resident forward fuses it, so that both give the same bits.
    const float* next_norm = nullptr;
    float eps = 0.0f;
    float* h_next = nullptr;
    const GpuQ8Rows* hq_next = nullptr;  // when set, h_next is also written there quantized
    // One-token steps of implementations that ask for it (predicts_next_layer): where the k
    // experts the next MoE layer (model layer predicted_layer, on this GPU) would pick for this h
    // go, best first (device), as a guess of what it will pick for its own input: experts worth
    // copying ahead. They are there once the implementation has called queue_prediction (on the
    // step's stream, before anything that overwrites h), which it may do after the routing has
    // left for the host, so that the prediction is not on the way from router to CPU.
    const int32_t* predicted_ids = nullptr;
    int64_t predicted_layer = -1;
    const FunctionRef<void()>* queue_prediction = nullptr;
};

class RoutedExperts {
public:
    virtual ~RoutedExperts() = default;
    // Called once per MoE layer and forward pass, in layer order. `cpu` is the forward's CPU
    // context (its thread pool computes experts that stay in RAM).
    virtual void forward(const RoutedExpertsStep& step, GpuContext& gpu, CpuContext& cpu) = 0;
    // Called after the last layer of a forward pass (statistics, copy scheduling).
    virtual void end_forward(GpuContext&) {}
    // Whether one-token steps should carry the next MoE layer's predicted experts (a router
    // launch more per layer).
    virtual bool predicts_next_layer() const { return false; }
};

}  // namespace strata::gpu
