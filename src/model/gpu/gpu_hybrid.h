#pragma once
// What the hybrid stacks share on the GPU (Qwen3-Next / Qwen3.5 in gpu_hybrid.cpp, qwen4exp in
// gpu_qwen4exp.cpp): the gated DeltaNet and gated attention mixers and the sigmoid-gated shared
// expert as the CPU blocks compute them (model/blocks/gated_delta_net_block.cpp,
// gated_attention_block.cpp, ffn_blocks.cpp), each sequence's recurrent state in VRAM, and the
// forward of one sequence at a time through its state.
// Each sequence's recurrent state (conv history and delta-rule matrices of every DeltaNet layer,
// and qwen4exp's PLE history) lives on the share that holds the layer, owned by the session's
// RecurrentState; the KV cache holds rows for the attention layers only.

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/gpu/gpu_ops_delta_net.h"
#include "backend/gpu/gpu_ops_qwen4exp.h"
#include "model/blocks/gated_delta_net_block.h"
#include "model/gpu/gpu_transformer.h"

namespace strata::gpu {

// Scratch slots of the hybrid blocks (after the shared ones); an architecture's own start at
// kFirstHybridArchSlot.
enum HybridSlot : int {
    kMixed = kFirstArchSlot, kZ, kBetaAlpha, kConvOut, kGates, kCore, kQGate, kAttnGate, kSharedLogit, kQ8Core,
    kFirstHybridArchSlot,
};

struct GpuDeltaNetWeights {
    DeviceWeight wqkv, wz, wba, wbeta, walpha, wout;
    DeviceWeight conv, dt_bias, a, ssm_norm;  // F32
    GpuNormGate output_gate = GpuNormGate::Silu;
};

// One sequence's recurrent state in VRAM: per DeltaNet layer its conv history and delta-rule
// matrices on the device of the share that holds the layer; qwen4exp's PLE block adds its
// convolution history (device) and the last n-gram token ids (host: the table rows are looked up
// there), which start EOS-filled.
class GpuRecurrentStorage final : public RecurrentStateStorage {
public:
    struct Layer {
        DeviceBuffer conv, ssm;
        GpuContext* ctx = nullptr;
    };
    std::vector<Layer> layers;  // by model layer; empty buffers for attention layers
    DeviceBuffer ple_conv;
    GpuContext* ple_ctx = nullptr;
    std::vector<int32_t> ple_tokens;
    int32_t ple_eos = 0;

    void clear() override;
    uint64_t bytes() const override;
    // Device → host (save) and host → device (load) copies of each layer's conv and ssm buffers,
    // then the PLE convolution's history and its token ids, in that order.
    void save(uint8_t* dst) const override;
    void load(const uint8_t* src) override;
};

class GpuHybridBlocks : public GpuTransformer {
public:
    using GpuTransformer::GpuTransformer;

    RecurrentState make_recurrent_state() const override { return RecurrentState(make_device_state()); }
    // One sequence at a time through the model's own state; a batch at position 0 starts over.
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) override;
    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& cpu) override;

protected:
    // The DeltaNet shapes the GPU kernels take, or why not.
    Status check_delta_net_shape() const;
    // The state of every DeltaNet layer (config_.is_recurrent_layer) on its share, cleared.
    std::unique_ptr<GpuRecurrentStorage> make_device_state() const;
    // The sequence's state on the device (checked: a state made by this model).
    static GpuRecurrentStorage& device_state(const SeqRows& s);
    void add_graph_addresses(std::vector<const void*>& a) const override;

    Status upload_delta_net(const GatedDeltaNetWeights& d, GpuShard& sh, GpuDeltaNetWeights& o);
    Status upload_gated_attention(const GatedAttentionWeights& a, GpuShard& sh, GpuAttentionWeights& o);
    Status upload_shared_expert(const SharedExpertWeights& s, GpuShard& sh, GpuDenseFfnWeights& o,
                                DeviceWeight& gate_inp);

    // DeltaNet(h), h = the layer's normalized input, as gated_delta_net without the residual, in kProj.
    float* delta_net(const GpuDeltaNetWeights& w, uint32_t il, float* h, int64_t n);
    // wo(attention(q, k, v) · sigmoid(gate)) of h, as gated_attention without the residual (this
    // rank's heads under a tensor split), in kProj; `selection`: QSA's kept keys (qwen4exp).
    float* gated_attention(const GpuAttentionWeights& w, float* h, int64_t n, const int32_t* positions,
                           int64_t kv_layer, const GpuKeySelection* selection = nullptr);
    // x += sigmoid(gate_inp · h) · down(silu(gate h) · up h), leaving h as it is for the routed
    // experts. x: the residual, a tensor split's FFN part, or a block output being summed.
    void shared_expert(const GpuDenseFfnWeights& w, const DeviceWeight& gate_inp, float* x, const float* h, int64_t n);

    int64_t conv_channels() const {
        const ModelConfig& c = config_;
        return 2 * int64_t{c.ssm_n_group} * c.ssm_d_state + c.ssm_d_inner;
    }

    GpuVHeadOrder v_order_ = GpuVHeadOrder::Grouped;

private:
    // HF's l2norm eps (the FLA kernels' constant), as gated_delta_net_block.cpp.
    static constexpr float kL2NormEps = 1e-6f;
    RecurrentState own_state_;               // the state plain forward() uses
    const KvCache* own_state_kv_ = nullptr;  // the cache of the sequence own_state_ belongs to
};

}  // namespace strata::gpu
