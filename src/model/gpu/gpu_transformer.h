#pragma once
// What every GPU forward pass shares, whatever its layers (gpu_llama.cpp: the Llama family and
// gpt-oss; gpu_hybrid.cpp: Qwen3-Next / Qwen3.5's DeltaNet stacks): the GPUs the layers are
// shared out over (gpu_shard.h), the KV cache in VRAM, the step loop — embedding, each layer as
// the architecture queues it, share boundaries, output head — the one-token decode graph, and
// the blocks more than one architecture uses (grouped-query attention, dense and routed-expert
// FFNs with the expert tiers hook). An architecture uploads its weights, says which layers keep
// KV rows and what each layer's input norm is, and queues a layer.
//
// Per step the host copies token ids and positions in and logits out; every op in between is
// queued on the shares' streams without a host wait (MoE routing included). Decode speed at
// batch 1 is launch-bound, so:
// - one-token steps with every expert in VRAM run as one graph launch (gpu_decode_graph.h); all
//   they need per step is read on the device from the positions array;
// - each residual add is fused with the norm that follows it (the next block's, or the output
//   norm after the last layer); a block leaves h = the next norm of x, so an architecture's
//   layer starts from h = its input norm of x and must leave h = next_norm(x);
// - small steps take the int8 matrix-vector kernel: every norm that writes h also writes it
//   quantized (hq_), once for all the products that read it.
// With profiling on (op_profiler.h) every op is bracketed and named, and steps run eagerly.
// Under --split layer the layers are shared out over several GPUs in order: each share runs its
// layers on its own stream, and at a boundary the next share's stream waits for the previous
// one's event and copies the residual x and the normed h (and h as int8) over, peer to peer when
// the pair allows. The share before a boundary holds a copy of the next layer's input norm, so
// h is computed as on one GPU and the split gives the same bits.
// Under --split tensor every GPU ("rank") holds every layer, with its share of the attention heads
// (and their KV cache), of each dense FFN's hidden columns and of each layer's experts; norms,
// routers and the residual stream are replicated. A layer runs in two parts (attention, FFN), each
// leaving a partial sum on every rank that an all-reduce (gpu_collective.h) completes before the
// replicated add + norm. The first rank holds the output head.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/rope_table.h"
#include "backend/gpu/gpu_collective.h"
#include "backend/gpu/gpu_decode_graph.h"
#include "model/gpu/gpu_model.h"
#include "backend/gpu/gpu_ops.h"
#include "backend/gpu/gpu_ops_qwen4exp.h"
#include "backend/gpu/gpu_sampling.h"
#include "backend/gpu/gpu_shard.h"
#include "model/blocks/blocks.h"
#include "model/model.h"

namespace strata::gpu {

struct RoutedExpertsStep;  // gpu_routed_experts.h

// Device scratch slots of one forward pass (GpuContext::scratch); the MoE plan takes three.
// Architectures number their own slots from kFirstArchSlot.
enum Slot : int {
    kTokens, kPositions, kResidual, kNormed, kQ, kK, kV, kAttnOut, kProj, kGate, kUp, kRouter, kExpertIds,
    kExpertWeights, kExpertGate, kExpertUp, kExpertOut, kLogits, kQ8Normed, kQ8Attn, kQ8Gate, kOutRows, kOutH,
    kSharedGate, kSharedUp, kSharedOut, kQ8Shared,  // a shared expert's FFN (beside the routed experts')
    kMoePlan, kFirstArchSlot = kMoePlan + 3,
};

struct GpuAttentionWeights {
    DeviceWeight wq, wk, wv, bq, bk, bv, q_norm, k_norm, wo, bo;
    DeviceWeight sinks;    // gpt-oss: one extra softmax logit per head
    bool sliding = false;  // attends to the last sliding_window positions only
};
struct GpuDenseFfnWeights {
    DeviceWeight gate, up, down;
};
// Routed experts; empty expert matrices when the expert tiers hold them.
struct GpuMoeWeights {
    DeviceWeight router, gate_exps, up_exps, down_exps;
    DeviceWeight router_bias, gate_bias, up_bias, down_bias;  // gpt-oss
};

// The KV cache of a GPU model: one part per share, holding its layers that keep rows.
class GpuKvStorage final : public KvCacheStorage {
public:
    uint64_t bytes() const override {
        uint64_t total = index_keys ? index_keys->bytes() : 0;
        for (const auto& c : caches) total += c->bytes();
        return total;
    }
    std::vector<std::unique_ptr<GpuKvCache>> caches;
    std::unique_ptr<GpuIndexKeys> index_keys;  // QSA's index keys (qwen4exp, one GPU); null elsewhere
};

class GpuTransformer : public Model {
public:
    GpuTransformer(const ModelConfig& config, const ComputeOptions& options);
    std::string device_name() const override;
    KvCache make_kv_cache(int64_t n_ctx) const override;
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& cpu) override;
    // Several sequences in one pass (the server's continuous batching): their tokens are
    // concatenated, so every weight is read once for all of them; attention (and the recurrent
    // layers) run per sequence on its own cache (and state). Logits equal each sequence's alone up
    // to the rounding of the kernels a larger batch takes.
    void forward_multi(std::span<const SequenceStep> steps, CpuContext& cpu) override;
    bool fuses_sequences() const override { return true; }
    // The last pass's LogitsFor::Last rows stay in VRAM when asked (null logits): sampling reduces
    // them there (gpu_sampling.h) and only the candidates are copied back; not with
    // GpuTuning::device_sampling off (every row copied to the host and sampled there, to compare).
    bool keeps_logits_on_device() const override { return options_.gpu_tuning.device_sampling; }
    void fetch_logits(const DeviceLogitsRow& row, float* out) override;
    void select_candidates(const DeviceLogitsRow& row, const CandidateQuery& query, CandidateSet& out) override;

protected:
    // ---- loading, in this order -----------------------------------------------------------------
    // The shares from the options: the one GPU, or the plan's layer split (checked).
    Status make_shares();
    // Which layers keep KV rows (all but the recurrent layers of hybrid stacks); before finish_load.
    void set_kv_layers(std::vector<bool> has_kv);
    // Uploads the embedding, output norm and head, the boundary norms (input_norms[il]: each
    // layer's input norm, host weights), the routing counters and the expert tiers; decides on
    // the decode graph. After the architecture uploaded its layers.
    Status finish_load(const GgufFile& file, const Weight& token_embd, const Weight& output_norm, const Weight& output,
                       const std::vector<Weight>& input_norms);

    // A MoE layer's router (and biases, gpt-oss) and, unless the tiers hold them, its experts.
    struct ExpertBiases {
        Weight router, gate, up, down;
    };
    Status upload_experts(const MoeFfnWeights& w, const ExpertBiases& biases, size_t share_index, GpuMoeWeights& out);

    size_t share_of(size_t layer) const;  // (under a tensor split: 0; every rank holds every layer)
    GpuShard& share(size_t index) const { return *shares_[index]; }
    bool tiered(size_t share_index) const;  // this share's routed experts are held by the tiers

    // ---- tensor split ----------------------------------------------------------------------------
    bool tensor_split() const { return tensor_; }
    size_t ranks() const { return tensor_ ? shares_.size() : 1; }
    // The rank whose ops are being queued (0 without a tensor split): which copy of the weights.
    size_t rank() const { return tensor_ ? cur_index_ : 0; }
    // Attention heads of the current rank (all of them without a tensor split, or when the
    // architecture keeps its attention whole on the first rank).
    size_t attention_ranks() const { return shards_attention() ? ranks() : 1; }
    int64_t heads() const { return config_.n_head / static_cast<int64_t>(attention_ranks()); }
    int64_t heads_kv() const { return config_.n_head_kv / static_cast<int64_t>(attention_ranks()); }
    // The routed experts [first, second) a rank holds.
    std::pair<int64_t, int64_t> expert_range(size_t rank) const {
        const int64_t n = config_.n_expert, r = static_cast<int64_t>(ranks()), i = static_cast<int64_t>(rank);
        return {n * i / r, n * (i + 1) / r};
    }

    // Layer il of an architecture's weight table onto the GPUs: under a tensor split each rank's
    // part (rank_part(src, r), a Result of the host layer with that rank's views), else the whole
    // layer on the share that holds il; upload(host layer, share index, device layer).
    template <typename HostLayer, typename DeviceLayer, typename RankPart, typename Upload>
    Status upload_layer_parts(const HostLayer& src, size_t il, std::vector<std::vector<DeviceLayer>>& layers,
                              RankPart&& rank_part, Upload&& upload) {
        if (!tensor_split()) return upload(src, share_of(il), layers[0][il]);
        for (size_t r = 0; r < ranks(); ++r) {
            STRATA_ASSIGN_OR_RETURN(HostLayer part, rank_part(src, r));
            STRATA_TRY(upload(part, r, layers[r][il]));
        }
        return Status::ok();
    }

    // Narrows a layer's stacked routed experts to rank r's (expert_range): views of the file.
    Status keep_rank_experts(MoeFfnWeights& moe, size_t r) const;

    // An empty part (n rows of n_embd zeros, in kProj) for a rank that holds none of a block: the
    // blocks an architecture keeps whole on the first rank (DeltaNet layers, MLA attention, shared
    // experts) are computed there and the other ranks add zeros to the all-reduce, so every rank
    // still ends with the first rank's bits.
    float* empty_part(int64_t n);

    // ---- what an architecture supplies ----------------------------------------------------------
    // An architecture that can be split by tensor says so and queues its layers in two parts.
    virtual bool supports_tensor_split() const { return false; }
    // Whether its attention heads (and KV cache) are shared out under a tensor split; if not, the
    // first rank holds the whole attention and KV cache (DeepSeek's latent attention, whose one
    // cached latent row serves every head).
    virtual bool shards_attention() const { return true; }
    // Layer il's attention on the current rank, h = its input norm on entry: this rank's part of
    // the attention output (n rows of n_embd, bias on rank 0 only).
    virtual float* queue_attention_part(uint32_t il, float* h, int64_t n, const int32_t* positions, int64_t kv_layer) {
        return nullptr;
    }
    // Layer il's FFN on the current rank, h = its FFN norm on entry: this rank's part of the output.
    virtual float* queue_ffn_part(uint32_t il, float* h, int64_t n, CpuContext& cpu) { return nullptr; }
    // Layer il's FFN norm on the current rank's device.
    virtual const float* ffn_norm_of(uint32_t il) const { return nullptr; }

    // Layer il's input norm on its share's device (the first op of a step and each layer's
    // predecessor norm into it).
    virtual const float* input_norm(uint32_t il) const = 0;
    // Queues layer il for the step's rows (seqs_ says which sequence each belongs to): h =
    // input_norm(x) on entry; leaves h = next_norm(x). `kv_layer`: the layer's index in its
    // share's part of each sequence's KV cache (-1: none).
    virtual void queue_layer(uint32_t il, float* x, float* h, int64_t n, const int32_t* positions, int64_t kv_layer,
                             const float* next_norm, CpuContext& cpu) = 0;
    // Device addresses a captured step reads beyond the KV cache (a recurrent state).
    virtual void add_graph_addresses(std::vector<const void*>&) const {}
    // Per-token inputs looked up on the host beside the embedding row (qwen4exp's PLE table rows,
    // from RAM or the SSD): floats per token, and the lookup of the step's rows (seqs_ says which
    // sequence each belongs to) into `out` (n rows of host_extra_width). They go up with the
    // embedding rows, so a captured decode step replays them; queue_layer finds them at
    // host_extras_ (page-locked host memory, n rows).
    virtual int64_t host_extra_width() const { return 0; }
    virtual void fill_host_extras(const int32_t* tokens, int64_t n, float* out, CpuContext& cpu) {}
    const float* host_extras_ = nullptr;
    // The routing of layer `layer`'s experts when it is not moe_ffn's softmax top-k (DeepSeek's
    // grouped sigmoid routing): an architecture that sets custom_routing_ writes n rows of k
    // expert ids and weights from the router logits here, queued on the current share's stream.
    virtual void route_experts(int64_t layer, const float* logits, int64_t n, int32_t* ids, float* weights) {}

    // One sequence's rows of the step being queued: rows [first, first + n), its KV cache and its
    // recurrent state (hybrid models; null otherwise).
    struct SeqRows {
        int64_t first = 0, n = 0;
        int64_t pos0 = 0;  // the position of its first row
        GpuKvStorage* kv = nullptr;
        RecurrentState* state = nullptr;
    };
    std::vector<SeqRows> seqs_;
    GpuKvCache& cache_of(const SeqRows& s) const { return *s.kv->caches[cur_index_]; }
    // forward() for one sequence with its state (hybrid models pass theirs).
    void forward_one(const Batch& batch, KvCache& kv, RecurrentState* state, float* logits, LogitsFor which,
                     CpuContext& cpu);

    // ---- shared blocks (gpu_transformer_blocks.cpp) ---------------------------------------------
    // Runs f as the op `name`: bracketed by the profiler's events when profiling, else just f.
    template <typename F> void op(const char* name, F&& f) {
        OpScope scope(cur_->ctx(), name);
        const OpAblation& study = cur_->ctx().tuning().ablation;
        if (!study.active()) {
            f();
            return;
        }
        GpuContext& g = cur_->ctx();
        const bool was_muted = g.launches_muted();
        g.mute_launches(was_muted || study.mutes(name));
        f();
        g.mute_launches(was_muted);
        gpu_empty_launches(study.extra_launches, g);
    }
    // x += attn(h), h = norm(x) on entry, as attention_block; leaves h = ffn_norm(x).
    void attention(const GpuAttentionWeights& w, float* x, float* h, int64_t n, const int32_t* positions, int64_t layer,
                   const float* ffn_norm);
    // The attention without the residual: the output projection (this rank's part under a tensor
    // split), in scratch slot kProj.
    float* attention_part(const GpuAttentionWeights& w, float* h, int64_t n, const int32_t* positions, int64_t layer);
    // The attention after the projections: q (roped here), k, v → each sequence's cache →
    // attention → output projection (+ bias) into `proj`; `gate` (optional, rows as the
    // attention output) scales the output by sigmoid(gate) first (gated attention).
    // With `selection` (rows of the whole step) each query reads only the keys QSA's indexer kept.
    void attend_and_project(const GpuAttentionWeights& w, float* q, const float* k, const float* v, int64_t n,
                            const int32_t* positions, int64_t layer, const GpuRope& rope, const float* gate, float* proj,
                            const GpuKeySelection* selection = nullptr);
    GpuRope rope_params(int64_t rope_dims) const;
    // x += down(silu(gate(h)) · up(h)), h = ffn_norm(x) on entry; leaves h = next_norm(x).
    void dense_ffn(const GpuDenseFfnWeights& w, float* x, float* h, int64_t n, const float* next_norm);
    float* dense_ffn_part(const GpuDenseFfnWeights& w, const float* h, int64_t n) {  // without the residual (kProj)
        return swiglu_ffn(w, h, n, FfnRole::Dense);
    }
    // down(silu(gate h) · up h) for n rows of h, without touching the residual. A block's own FFN
    // writes kProj; shared experts write kSharedOut from slots of their own, since the routed
    // experts of the same block still use theirs. The roles' ops are named apart in profiles.
    enum class FfnRole { Dense, SharedExperts };
    float* swiglu_ffn(const GpuDenseFfnWeights& w, const float* h, int64_t n, FfnRole role);
    // x += Σ_top-k weight · expert(h) (softmax routing, or route_experts' with custom_routing_;
    // gpt-oss's biases and activation when its weights have them), h = ffn_norm(x) on entry;
    // leaves h = next_norm(x).
    int64_t next_predictable_layer(int64_t layer);
    void predict_next_experts(int64_t next, const float* h, int64_t k, int32_t* out);
    void moe_ffn(const GpuMoeWeights& w, int64_t layer, float* x, float* h, int64_t n, const float* next_norm,
                 CpuContext& cpu);
    // A tensor split's MoE part: the replicated router and routing, then this rank's experts only
    // (w holds them: expert_range(rank())), combined into a part of the output (kProj).
    float* moe_ffn_part(const GpuMoeWeights& w, int64_t layer, float* h, int64_t n);
    // Gate, up, activation and down of the plan's pairs (h: the tokens' rows): rows of n_embd per
    // pair, in kExpertOut.
    const float* expert_products(const GpuMoeWeights& w, const MoePlan& plan, const int32_t* ids, const float* h,
                                 int64_t n);
    // x (rows × width) quantized for the int8 kernels when a step of n tokens takes them (decode
    // and small batches always, prompt batches where gpu_prompt_takes_q8); null otherwise, and the
    // products read x.
    const GpuQ8Rows* quantized(const float* x, int64_t rows, int64_t width, int64_t n, int slot, GpuQ8Rows& out);
    bool takes_int8(int64_t n, int64_t width) const;

    ComputeOptions options_;
    bool gpt_oss_ = false;  // gpt-oss's routing (softmax over the top k) and clamped SwiGLU experts
    bool custom_routing_ = false;  // moe_ffn takes its ids and weights from route_experts
    RopeTable rope_;                          // set when the model's rope needs a table (YaRN) ...
    std::vector<const double*> rope_freq_;    // ... and its frequencies on each share's device
    // This forward's h as int8 (written by the norms), or null when the step is too large.
    GpuQ8Rows hq_view_;
    const GpuQ8Rows* hq_ = nullptr;
    GpuShard* cur_ = nullptr;  // the share whose layers are being queued
    size_t cur_index_ = 0;     // ... and its index

private:
    std::vector<const void*> graph_addresses(const GpuKvStorage& kv) const;
    // Queues the pass from the tokens' embedding rows (page-locked host memory); the logits of rows
    // out_rows (device row ids, n_out of them) or, when null, of the last row (LogitsFor::Last) or
    // every row.
    const float* queue_forward(const float* host_rows, const int32_t* positions, int64_t n, LogitsFor which,
                               const int32_t* out_rows, int64_t n_out, CpuContext& cpu);
    // queue_forward's layers under a tensor split (every rank, each part all-reduced); h is rank
    // 0's final norm, from which the head computes the logits.
    float* queue_tensor_layers(const float* host_rows, const int32_t* positions, int64_t n, CpuContext& cpu);
    // The logits of the rows asked for, from h (n rows) on the current share.
    const float* queue_output(float* h, int64_t n, LogitsFor which, const int32_t* out_rows, int64_t n_out);
    // The current rank as the one whose ops are queued: its share, device and int8 view of h.
    void select_rank(size_t r);
    // Makes the contexts' shares for --split tensor and its all-reduce.
    Status make_tensor_shares();
    // The tokens' rows of the embedding table (in RAM), dequantized into page-locked memory.
    const float* embed_on_host(const int32_t* tokens, int64_t n, CpuContext& cpu);

    // Off with STRATA_GPU_MATVEC=f32 (for A/B benchmarks of the two matrix-vector kernels).
    bool int8_matvec_ = true;
    // Declaration order is destruction order reversed: the graph (which holds the first share's
    // context) goes before the shares.
    std::vector<std::unique_ptr<GpuShard>> shares_;
    std::vector<DeviceWeight> boundary_norms_;  // per share but the last: the next share's first norm
    std::vector<int64_t> kv_slot_;              // per layer: its index in its share's KV cache, or -1
    // Per layer: its MoE router and router bias (gpt-oss) once a forward has passed it (empty:
    // none yet), for predict_next_experts.
    std::vector<DeviceWeight> seen_routers_, seen_router_biases_;
    std::vector<int64_t> kv_layers_per_share_;
    bool peer_access_ = false;
    bool tensor_ = false;                         // --split tensor: the shares are ranks
    std::unique_ptr<GpuCollective> collective_;   // ... and their all-reduce
    std::vector<GpuQ8Rows> rank_hq_;              // each rank's view of h as int8 (this step)
    std::unique_ptr<DecodeGraph> decode_graph_;  // one-token steps as graphs; no tiers, no profiling
    // The last pass's logits rows on the first share (its kLogits scratch), one per output row.
    const float* pass_logits_ = nullptr;
    int64_t pass_rows_ = 0;
    // Where the rows asked for by DeviceLogitsRow are, after checking the pass is the last one.
    float* device_row(const DeviceLogitsRow& row);
    GpuCandidateSelector selector_;
    Weight token_embd_;                  // in RAM (the mapped file), as the memory plan has it
    PinnedBuffer embedded_;              // a step's embedding rows, copied up by the first share
    DeviceWeight output_norm_, output_;  // on the last share
};

// A load_gpu_* entry point (model/gpu/gpu_model.h): the pass built from the config and options,
// then its weights read from the file.
template <class Pass>
Result<std::unique_ptr<Model>> load_gpu_pass(const GgufFile& file, const ModelConfig& config, const ComputeOptions& options) {
    auto model = std::make_unique<Pass>(config, options);
    STRATA_TRY(model->load(file));
    return std::unique_ptr<Model>(std::move(model));
}

}  // namespace strata::gpu
