#pragma once
// The GPU ops qwen4exp (Qwen3.8-Flash-Next) adds to the hybrid layers' (gpu_ops_delta_net.h):
// the hyper-connection mixers (ops_hyper_connection.cu; CPU reference
// model/blocks/hyper_connection.cpp), QSA's lightning indexer and the attention over the keys it
// selects (ops_qsa.cu; model/blocks/qsa_indexer.cpp, backend/cpu/attention.cpp) and the PLE
// block's gate and convolution (ops_ple.cu; model/blocks/ple_block.cpp). The same formulas as
// the CPU code, on device pointers, queued on the context's stream; every op takes only values
// that stay the same from one decode step to the next (positions are read on the device), so a
// captured decode step replays them. Parity tests: tests/gpu/op_parity_qwen4exp_test.cpp.
//
// Around each mixer and MoE of a layer (R: rows of hc·n per token; matrices by gpu_matmul):
//   gpu_grouped_rms_norm(R, norm, n_tok, hc, n, eps, normed, ctx);
//   low = W_down · normed;  gpu_hc_low_activation(low, n_tok · rank, hc, ctx);
//   mix = W_up · low;       gpu_hc_mix_streams(mix, normed, n_tok, hc, n, x, ctx);
//   a = W_inject · normed;  gpu_hc_inject_weights(a, n_tok · hc, hc, ctx);
//   ... y = block(x) ...;   gpu_hc_combine(y, a, n_tok, hc, n, R, ctx);

#include <cstdint>
#include <string>
#include <vector>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/gpu_ops.h"

namespace strata::gpu {

// ---- hyper-connections ------------------------------------------------------------------------

// R[t][s] = x[t] for every stream s: the residual streams all start as the token's embedding.
void gpu_hc_broadcast(const float* x, int64_t n_tokens, int64_t hc, int64_t n, float* R, GpuContext& ctx);
// cpu_grouped_rms_norm: row t, group g (n values at (t·groups + g)·n) normed alone with the
// weight's g-th part. out may equal x.
void gpu_grouped_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t groups, int64_t n, float eps,
                          float* out, GpuContext& ctx);
// low = silu(low / hc), in place.
void gpu_hc_low_activation(float* low, int64_t count, int64_t hc, GpuContext& ctx);
// x[t][i] = (Σ_s σ(mix[t][s][i]) · normed[t][s][i]) / hc, streams summed in order.
void gpu_hc_mix_streams(const float* mix, const float* normed, int64_t n_tokens, int64_t hc, int64_t n, float* x,
                        GpuContext& ctx);
// a = 2σ(a / hc), in place: each stream's weight for the block's output.
void gpu_hc_inject_weights(float* a, int64_t count, int64_t hc, GpuContext& ctx);
// R[t][s][i] += a[t][s] · y[t][i].
void gpu_hc_combine(const float* y, const float* a, int64_t n_tokens, int64_t hc, int64_t n, float* R, GpuContext& ctx);

// ---- QSA: index keys, block selection, attention over the selection ---------------------------

// One sequence's index keys of its QSA layers: per layer the raw key of every position
// (n_ctx rows of dim) and the pooled key of every complete block of `ratio` positions (normed
// and roped at the block's first position: what queries score), written as blocks complete.
class GpuIndexKeys {
public:
    // `ratios`: per cache layer its compress ratio (0: a layer without an indexer, which keeps no
    // rows). An empty object and `error` set when the device is out of memory.
    GpuIndexKeys(DevicePool& pool, const std::vector<int64_t>& ratios, int64_t n_ctx, int64_t dim, std::string* error);
    bool ok() const { return ok_; }
    int64_t n_ctx() const { return n_ctx_; }
    int64_t dim() const { return dim_; }
    int64_t ratio(int64_t layer) const { return ratios_[static_cast<size_t>(layer)]; }
    float* raw(int64_t layer) const { return layers_[static_cast<size_t>(layer)].raw.as<float>(); }
    float* pooled(int64_t layer) const { return layers_[static_cast<size_t>(layer)].pooled.as<float>(); }
    uint64_t bytes() const;

private:
    struct Layer { DeviceBuffer raw, pooled; };
    std::vector<int64_t> ratios_;
    int64_t n_ctx_ = 0, dim_ = 0;
    std::vector<Layer> layers_;
    bool ok_ = false;
};

// Stores the raw index keys of n_tokens tokens (rows of dim) at positions[t] of `layer`, then the
// pooled key of every block a token completes (positions[t] + 1 a multiple of the ratio):
//   pooled[b] = rope(rms_norm(mean of the block's raw keys; k_norm), b · ratio)
void gpu_qsa_store_keys(const float* keys, int64_t n_tokens, const int32_t* positions, GpuIndexKeys& cache,
                        int64_t layer, const float* k_norm, float eps, const GpuRope& rope, GpuContext& ctx);

// What the attention over a selection needs: the layer's ratio, how many blocks each query keeps
// (top_k / ratio) and, for the queries that select (more complete blocks than they keep), the kept
// block ids, ascending (n_tokens rows of `keep`).
struct GpuKeySelection {
    int64_t ratio = 0, keep = 0;
    const int32_t* blocks = nullptr;
};

// The most query rows one gpu_qsa_select call scores at once: the scores take rows × (n_ctx /
// ratio) floats of scratch, so longer prompts go in chunks.
int64_t gpu_qsa_select_chunk(int64_t n_ctx, int64_t ratio);
// Per query t at positions[t] (q: n_tokens rows of n_head heads of dim, normed and roped), with
// B = (positions[t] + 1) / ratio complete blocks: when B > keep, scores each block
//   s_b = Σ_h relu(q_h · pooled_b) / sqrt(dim)
// and writes the keep best (ties to the lower index), ascending, into blocks[t·keep ..]. Queries
// with B <= keep read every key and write nothing. `scores`: gpu_qsa_select_chunk(...) · (n_ctx /
// ratio) floats of device scratch, n_tokens at most the chunk.
void gpu_qsa_select(const float* q, int64_t n_tokens, const int32_t* positions, int64_t n_head,
                    const GpuIndexKeys& cache, int64_t layer, int64_t keep, float* scores, int32_t* blocks,
                    GpuContext& ctx);

// gpu_attention_at over the selection: a query that selects reads the kept blocks' keys and the
// tail after its last complete block; any other reads every key before it (dense causal). The
// same arithmetic as the rows path of gpu_attention (one block per query and head).
void gpu_qsa_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                       const GpuAttentionParams& p, const GpuKeySelection& sel, float* out, GpuContext& ctx);

// ---- PLE ---------------------------------------------------------------------------------------

// u[t][s] = σ(g) · value[t], g = sign(d) sqrt(max(|d|, 1e-6)), d = key[t][s] · query[t][s] / sqrt(n):
// key, query and u rows of hc·n, value rows of n.
void gpu_ple_gate(const float* key, const float* query, const float* value, int64_t n_tokens, int64_t hc, int64_t n,
                  float* u, GpuContext& ctx);
// One sequence: R += u + silu(conv(x)), conv the causal depthwise convolution of `kernel` taps,
// `dilation` rows apart, over [history ; x] (history: (kernel-1)·dilation rows of `channels`,
// oldest first; weight: channels rows of kernel taps), then history advanced past x.
void gpu_ple_conv_add(const float* x, const float* u, int64_t n_tokens, int64_t channels, const float* weight,
                      int64_t kernel, int64_t dilation, float* history, float* R, GpuContext& ctx);

}  // namespace strata::gpu
