#pragma once
// The GPU ops of the transformer blocks: the same operations as backend/cpu/ops.h, matmul.h and
// attention.h, on device pointers, queued on the context's stream (no host synchronisation).
// Every op has a CPU reference and an entry in tests/gpu/op_parity_test.cpp. Plain C++ so that
// host code compiled by g++ calls what nvcc / clang -x hip compiled.
//
//   gpu_rms_norm(x, norm_w, n_tokens, n_embd, eps, h, ctx);
//   gpu_matmul(wq, 0, h, n_tokens, q, ctx);                 // wq in VRAM, any supported type
//   gpu_rope(q, n_tokens, n_head, GpuRope{...}, positions, ctx);
//   gpu_attention(q, kv, layer, n_tokens, pos0, params, out, ctx);

#include <cstdint>

#include "backend/gpu/device_runtime.h"
#include "gguf/tensor_type.h"
#include "kv/kv_type.h"
#include "backend/logit_candidates.h"

namespace strata::gpu {

// A weight tensor in VRAM; the same fields as model/weights.h's Weight.
struct DeviceWeight {
    const uint8_t* data = nullptr;
    TensorType type = TensorType::F32;
    int64_t ne[4] = {1, 1, 1, 1};  // ne[0]: row length (inputs); ne[1]: rows (outputs); ne[2]: matrices
    uint64_t row_bytes = 0;
    // Bytes from one matrix to the next; 0: packed (ne[1] · row_bytes). Expert slots in VRAM hold
    // one expert's gate|up|down each, so matrix m of a slot pool's view is slot m.
    uint64_t matrix_bytes = 0;
    uint64_t matrix_stride() const { return matrix_bytes ? matrix_bytes : static_cast<uint64_t>(ne[1]) * row_bytes; }
    explicit operator bool() const { return data != nullptr; }
    const float* f32() const { return reinterpret_cast<const float*>(data); }
};

// Whether the GPU kernels can read this weight type (dequantize-in-kernel dot products).
bool gpu_supports_type(TensorType type);
// ... and rows of n values of it: whole 32-value chunks, or for the float types (F32, F16, BF16)
// any multiple of 8, the last part chunk read value by value (small shared experts of fixtures).
bool gpu_supports_rows(TensorType type, int64_t n);

struct GpuQ8Rows;  // int8 activations (below)

// ---- element-wise and per-row (ops_elementwise.cu) ---------------------------------------------
// out[r] = x[r] / sqrt(mean(x[r]²) + eps) · weight (weight may be null). out may equal x. With
// q8 (a gpu_q8_view of n_rows rows of n), out is also written quantized there, as gpu_quantize_q8.
void gpu_rms_norm(const float* x, const float* weight, int64_t n_rows, int64_t n, float eps, float* out, GpuContext& ctx,
                  const GpuQ8Rows* q8 = nullptr);

struct GpuRope {
    bool neox = false;      // pairs (i, i + d/2) instead of (2i, 2i + 1)
    int64_t head_dim = 0;   // stride between heads
    int64_t rope_dims = 0;  // leading dimensions of each head that rotate
    float base = 10000.0f;
    // A precomputed table (backend/cpu/rope_table.h: YaRN and other scaled variants): device
    // array of rope_dims / 2 radians per position, used instead of base^(-2i/d), and a factor
    // on cos and sin — the arithmetic of cpu_rope_table.
    const double* inv_freq = nullptr;
    float attn_factor = 1.0f;
};
// In place; positions: device array of n_tokens.
void gpu_rope(float* x, int64_t n_tokens, int64_t n_head, const GpuRope& p, const int32_t* positions, GpuContext& ctx);

void gpu_swiglu(float* gate, const float* up, int64_t n, GpuContext& ctx);  // gate = silu(gate) · up
// n chained kernels that do nothing but wait for the one before (a timing study's unit launch).
void gpu_empty_launches(int n, GpuContext& ctx);
void gpu_add(float* x, const float* y, int64_t n, GpuContext& ctx);         // x += y
// Copies `bytes` (a multiple of 4; both addresses 4-byte aligned) by a kernel, where either side
// may be page-locked host memory seen through its mapping (PinnedBuffer::device_view()). A copy
// call would take a copy engine and could queue behind large copies on other streams (the
// expert tiers' streaming); this does not. The host reads what was written there once the stream
// has passed this point (a synchronize or an event); what it wrote before the call is read.
void gpu_copy_words(void* dst, const void* src, uint64_t bytes, GpuContext& ctx);
// Two gpu_copy_words in one single-block kernel, then the 32-bit word at `word_view` (page-locked
// host memory seen through its mapping) set to `value` once both copies are visible to the host:
// a host thread that sees the value may read what was copied, without an event. (An event's
// record and the host's wait for it took ~6 µs more while a copy engine streamed into VRAM: the
// GPU expert tiers' decode, bench/results/2026-11-30-chain-events.) Spans up to ~64 KiB.
void gpu_copy_words_then_flag(void* dst0, const void* src0, uint64_t bytes0, void* dst1, const void* src1,
                              uint64_t bytes1, uint32_t* word_view, uint32_t value, GpuContext& ctx);
// Work queued after this on ctx's stream waits until the 32-bit counter at `word_view` (page-locked
// host memory seen through PinnedBuffer::device_view) reaches `value`: the host raises it (a
// release store) when the data that work reads is ready, without waiting itself. The host's
// thread that raises it must not depend on this stream.
void gpu_wait_host_word(const uint32_t* word_view, uint32_t value, GpuContext& ctx);
// The mapping's check (experts/mapped_alias.h): one thread polls words_view[0] until it holds
// `value` or about a second of GPU clock ticks passed, then writes `value` (seen) or 0 (not seen)
// into words_view[1]. Never traps: not seeing the value is an answer here, not a bug.
void gpu_probe_wait_then_answer(uint32_t* words_view, uint32_t value, GpuContext& ctx);
// Tagged words (core/tagged_words.h): both spans' words as (tag << 32 | word) pairs into
// `pairs_view` (page-locked host memory seen through its mapping), src1's after src0's, with no
// fence and no flag; the host polls the pairs (await_tagged_words). One block: up to ~64 KiB.
void gpu_copy_words_tagged(uint64_t* pairs_view, const void* src0, uint64_t bytes0, const void* src1, uint64_t bytes1,
                           uint32_t tag, GpuContext& ctx);
// Work queued after this waits until each of the n pairs at `pairs_view` (written by the host:
// write_tagged_words) holds `tag`, and finds their words in dst (device memory). The pairs are
// polled only once the counter at `start_view` (null: none) reaches `start_value`, which the
// host raises when it begins to write them, so that the bus carries no polling before then.
void gpu_await_tagged_words(const uint64_t* pairs_view, uint64_t n, uint32_t tag, const uint32_t* start_view,
                            uint32_t start_value, void* dst, GpuContext& ctx);
void gpu_add_bias(float* x, const float* bias, int64_t n_rows, int64_t n, GpuContext& ctx);
void gpu_softmax(float* x, int64_t n_rows, int64_t n, GpuContext& ctx);     // per row, in place

// ---- quantized weights (ops_matmul.cu) ----------------------------------------------------------
// out[t] = W[ids[t]] as floats; ids on the device.
void gpu_get_rows(const DeviceWeight& w, const int32_t* ids, int64_t n, float* out, GpuContext& ctx);
// y[t][o] = Σ_i W_m[o][i] · x[t][i] for matrix m of w; f32 activations, f32 accumulation. With
// xq (x quantized by gpu_quantize_q8) and few tokens, weights that gpu_matvec_takes_q8 go through
// the int8 kernel instead (ops_matvec_q8.cu); x is still read by the other kernels.
void gpu_matmul(const DeviceWeight& w, int64_t matrix, const float* x, int64_t n_tokens, float* y, GpuContext& ctx,
                const GpuQ8Rows* xq = nullptr);

// ---- int8 activations for the matrix-vector kernel (ops_matvec_q8.cu) -------------------------
// Rows of n_in values as blocks of 32 int8 with a scale: q = round(x / d), d = max|x| / 127; ds
// holds (d, d·Σq) per block. Quantized once per op input and shared by the products that read it
// (q, k and v; router, gate and up), so decode multiplies packed weights with dot4_i8.
struct GpuQ8Rows {
    const int8_t* q = nullptr;   // [n_rows][n_in]
    const float* ds = nullptr;   // [n_rows][n_in / 32][2]
    int64_t n_in = 0;
};
// Rows [first, ...) of r.
inline GpuQ8Rows gpu_q8_rows_from(const GpuQ8Rows& r, int64_t first) {
    GpuQ8Rows s = r;
    s.q += first * r.n_in;
    s.ds += first * (r.n_in / 16);
    return s;
}
// Buffers from the context's scratch slot `scratch_slot`.
GpuQ8Rows gpu_quantize_q8(const float* x, int64_t n_rows, int64_t n_in, int scratch_slot, GpuContext& ctx);
// The same in a caller's buffer of gpu_q8_bytes: a view of it, and rows [first, first + n) of x
// (rows of out.n_in) quantized into the same rows of the view.
uint64_t gpu_q8_bytes(int64_t n_rows, int64_t n_in);
GpuQ8Rows gpu_q8_view(void* buffer, int64_t n_rows, int64_t n_in);
void gpu_quantize_q8_rows(const float* x, int64_t first, int64_t n, const GpuQ8Rows& out, GpuContext& ctx);
// Whether the int8 kernel reads this weight's type and row length.
bool gpu_matvec_takes_q8(const DeviceWeight& w);
// Whether prompt batches (from kGpuTiledMinTokens tokens) on this device multiply int8
// activations on int8 tensor cores (ops_matmul_mmq.cu: CUDA sm_80+, STRATA_GPU_MMQ not 0), for
// the weights gpu_matvec_takes_q8 accepts; others keep the float tiles.
bool gpu_prompt_takes_q8(const GpuContext& ctx);
// Products of one input in one launch: y_i = W_i · x for up to three weights (q, k and v) with
// rows of the same length. False (nothing queued) unless all take the int8 kernel at n_tokens:
// then the caller runs gpu_matmul for each.
struct GpuMatvecOut {
    const DeviceWeight* w = nullptr;
    float* y = nullptr;
};
bool gpu_matvec_q8_many(const GpuMatvecOut* outs, int n, const GpuQ8Rows& xq, int64_t n_tokens, GpuContext& ctx);
// y = silu(gate · x) · (up · x) in one launch, gate and up of one type and shape; false as above.
bool gpu_matvec_q8_swiglu(const DeviceWeight& gate, const DeviceWeight& up, const GpuQ8Rows& xq, int64_t n_tokens,
                          float* y, GpuContext& ctx);

// ---- attention over a device KV cache (ops_attention.cu) ---------------------------------------

// Keys and values of every layer for n_ctx positions, rows of k_dim / v_dim in `type`.
//
// Q8_0 keeps the rows as ggml's q8_0 blocks (32 int8 values and an f16 scale: 53% of f16, so about
// twice the context in the same VRAM), and attention reads them in f16 from a staging copy of one
// layer: keys(layer) and values(layer) then point at that copy (the same for every layer), where
// the store kernels write a step's new rows in f16 as for an f16 cache. Before attention reads a
// layer, gpu_attention (and gpu_attention_mla) bring the copy up to date (gpu_kv_q8_sync): the new rows are quantized
// into the stored rows and read back, and the older rows are read from the stored ones, so
// attention sees every key and value as the cache keeps it, as the CPU's q8_0 cache does. That
// costs a read of the stored rows and a write of the copy per layer and step on top of the
// attention's own read of the copy. Rows must be whole 32-value blocks.
class GpuKvCache {
public:
    // An empty cache and `error` set when the device is out of memory.
    GpuKvCache(DevicePool& pool, int64_t n_layer, int64_t n_ctx, int64_t k_dim, int64_t v_dim, KvCacheType type,
               std::string* error);
    bool ok() const { return !layers_.empty() || n_layer_ == 0; }
    // The type attention reads and the store kernels write: f16 for a q8_0 cache (its staging copy).
    KvCacheType type() const { return type_ == KvCacheType::Q8_0 ? KvCacheType::F16 : type_; }
    KvCacheType stored_type() const { return type_; }
    int64_t n_ctx() const { return n_ctx_; }
    int64_t k_dim() const { return k_dim_; }
    int64_t v_dim() const { return v_dim_; }
    void* keys(int64_t layer) const { return staging_k_ ? staging_k_.data() : layers_[static_cast<size_t>(layer)].k.data(); }
    void* values(int64_t layer) const { return staging_v_ ? staging_v_.data() : layers_[static_cast<size_t>(layer)].v.data(); }
    // The stored rows of a layer (the same as keys/values but for a q8_0 cache).
    void* stored_keys(int64_t layer) const { return layers_[static_cast<size_t>(layer)].k.data(); }
    void* stored_values(int64_t layer) const { return layers_[static_cast<size_t>(layer)].v.data(); }
    uint64_t bytes() const;

private:
    struct Layer { DeviceBuffer k, v; };
    int64_t n_layer_, n_ctx_, k_dim_, v_dim_;
    KvCacheType type_;
    std::vector<Layer> layers_;
    DeviceBuffer staging_k_, staging_v_;  // q8_0: one layer's rows in f16
};
// A q8_0 cache's layer brought up to date before attention reads its staging copy (the attention
// ops call it themselves): the rows of the tokens at positions[t] (device; or pos0 + t when
// positions is null), just written there in f16, are quantized into the stored rows and read back,
// and the older rows are read from the stored ones. Nothing for other types.
void gpu_kv_q8_sync(const GpuKvCache& kv, int64_t layer, const int32_t* positions, int64_t pos0, int64_t n_tokens,
                    GpuContext& ctx);

// Writes n_tokens rows of k and v (f32) at positions pos0 .. pos0 + n_tokens - 1 of `layer`.
void gpu_kv_store(const float* k, const float* v, int64_t n_tokens, int64_t pos0, GpuKvCache& kv, int64_t layer,
                  GpuContext& ctx);

struct GpuAttentionParams {
    int64_t n_head = 0, n_head_kv = 0;
    int64_t head_dim_k = 0, head_dim_v = 0;  // at most kGpuMaxHeadDim
    float scale = 1.0f;
    const float* sinks = nullptr;  // optional [n_head] extra softmax logit per head (device)
    int64_t sliding_window = 0;    // > 0: a query at position p sees keys p - window + 1 .. p
};
constexpr int64_t kGpuMaxHeadDim = 256;
// The GpuContext scratch slot attention keeps its split-K partials in (steps of few tokens over
// a deep cache). Callers' own slots stay below it (gpu_llama.cpp's Slot ends near 20); it is one
// size per device (~1 MB on an H200), so a captured decode step never sees it move.
constexpr int kGpuAttentionScratchSlot = 48;
// The slot of the float tiles' split-K partials (ops_matmul_tiled.cu: dense products whose tiles
// alone are few, in prompt batches; never inside a captured decode step).
constexpr int kGpuSplitKScratchSlot = 50;
// Causal grouped-query attention: q n_tokens rows of n_head·head_dim_k (roped), the cache holding
// positions [0, pos0 + n_tokens); out n_tokens rows of n_head·head_dim_v. One query token (or a
// few) over a deep cache runs split-K across blocks; prompt batches run flash-style tiles.
void gpu_attention(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, int64_t pos0,
                   const GpuAttentionParams& p, float* out, GpuContext& ctx);

// ---- mixture of experts (ops_moe.cu) ----------------------------------------------------------
// Softmax over n_expert logits per token, the top k kept (ties to the lower index), their weights
// renormalized to sum to one when `normalize`. ids/weights: n_tokens rows of k (device).
void gpu_moe_route_softmax_topk(const float* logits, int64_t n_tokens, int64_t n_expert, int64_t k, bool normalize,
                                int32_t* ids, float* weights, GpuContext& ctx);

// The (token, slot) pairs sorted by expert and cut into tiles of up to kGpuMatmulColumns pairs of
// one expert, so each expert's weights are read once per tile. Built on the device.
constexpr int kGpuMatmulColumns = 8;
// Prompt batches go through a shared-memory tiled kernel instead (a block computes 64 outputs ×
// up to 64 columns, each weight tile dequantized once per block): dense products from this many
// tokens, MoE plans whose tiles are this wide (gpu_moe_tile_columns).
constexpr int kGpuTiledColumns = 64;
constexpr int64_t kGpuTiledMinTokens = 32;
// Whether prompt batches through `w` run on tensor cores (CUDA sm_70+, any weight type but F32;
// off with STRATA_GPU_TENSOR_CORES=0): weights and activations rounded to f16, sums in f32.
// Otherwise the tiled kernel multiplies in f32.
bool gpu_tiled_matmul_f16(const DeviceWeight& w, const GpuContext& ctx);
// The tile width a MoE plan of n_pairs pairs over n_expert experts should use: wide tiles once
// the average expert gets enough pairs to fill a good part of one.
int gpu_moe_tile_columns(int64_t n_pairs, int64_t n_expert, const DeviceWeight& gate_up, const DeviceWeight& down);
struct MoePlan {
    int tile_columns = kGpuMatmulColumns;  // pairs per tile: kGpuMatmulColumns or kGpuTiledColumns
    int max_tile_pairs = kGpuMatmulColumns;  // the most pairs a tile holds: 1 in one-token plans
    int64_t n_pairs = 0;     // n_tokens · k
    int64_t max_tiles = 0;   // launch bound: tiles beyond the device-side count exit at once
    int32_t* sorted = nullptr;   // [n_pairs] pair indices grouped by expert
    int32_t* tiles = nullptr;    // [max_tiles][3] (expert, first sorted index, count)
    int32_t* n_tiles = nullptr;  // [1]
};
// Plan buffers come from the context's scratch slots [slot, slot + 2]. The plan holds the pairs
// whose expert id is in [expert_begin, expert_begin + n_expert), as expert (id - expert_begin):
// a tensor split's GPU plans only its own experts (their weights are its slice); other pairs'
// output rows are left unwritten.
MoePlan gpu_moe_plan(const int32_t* ids, int64_t n_pairs, int64_t n_expert, int scratch_slot, GpuContext& ctx,
                     int tile_columns = kGpuMatmulColumns, int64_t expert_begin = 0);

// For every pair p of the plan: y[p] = W_{expert(p)} · x[p / pairs_per_x_row]. x holds one row per
// token (gate/up: pass k, pair p = token·k + slot) or one per pair (down: pass 1).
void gpu_matmul_experts(const DeviceWeight& w, const MoePlan& plan, const float* x, int64_t pairs_per_x_row, float* y,
                        GpuContext& ctx, const GpuQ8Rows* xq = nullptr);

// Rows by sorted position instead of by pair: for a plan built on the host that covers only some
// pairs (the expert tiers compute hits and streamed experts in separate launches), the
// intermediate gate/up rows are indexed by position in `sorted`, so each launch's rows form one
// contiguous range (for gpu_swiglu) whatever pairs it holds.
enum class MoeRows { Pair, Sorted };
// y[rows_y(c)] = W_{matrix of c's tile} · x[rows_x(c)] for each sorted position c of the plan's
// tiles; Pair rows are pair / pairs_per_x_row for x and pair for y.
void gpu_matmul_experts_rows(const DeviceWeight& w, const MoePlan& plan, const float* x, MoeRows x_rows,
                             int64_t pairs_per_x_row, float* y, MoeRows y_rows, GpuContext& ctx,
                             const GpuQ8Rows* xq = nullptr);

// gpu_matvec_q8_swiglu per expert over a plan of narrow tiles (rows as gpu_matmul_experts_rows);
// false (nothing queued) for wide tiles or weights the int8 kernel does not take.
bool gpu_matvec_q8_swiglu_experts(const DeviceWeight& gate, const DeviceWeight& up, const MoePlan& plan,
                                  const GpuQ8Rows& xq, MoeRows x_rows, int64_t pairs_per_x_row, float* y, MoeRows y_rows,
                                  GpuContext& ctx);

// Experts with biases (gpt-oss), on rows of n per (token, slot) pair p = t·k + j (expert ids[p]),
// as gpu_matmul_experts writes them (ops_moe_bias.cu). Null biases add nothing.
//   gate[p] = act(gate[p] + gate_bias[ids[p]], up[p] + up_bias[ids[p]])
enum class GpuExpertActivation {
    SwiGlu,               // silu(gate) · up
    GptOssClampedSwiGlu,  // gate ≤ 7, up ∈ [−7, 7]: gate · sigmoid(1.702 gate) · (up + 1)
};
// With row_pairs, row r is pair row_pairs[r] (rows in the sorted order of a plan: the expert tiers).
void gpu_moe_bias_activation(float* gate, const float* up, const int32_t* ids, int64_t n_pairs, int64_t n,
                             const float* gate_bias, const float* up_bias, GpuExpertActivation act, GpuContext& ctx,
                             const int32_t* row_pairs = nullptr);
//   out[p] += bias[ids[p]]
void gpu_moe_add_expert_bias(float* out, const int32_t* ids, int64_t n_pairs, int64_t n, const float* bias,
                             GpuContext& ctx);

// x[t] += Σ_j weights[t·k + j] · expert_out[t·k + j], rows of n.
void gpu_moe_combine(const float* expert_out, const float* weights, int64_t n_tokens, int64_t k, int64_t n, float* x,
                     GpuContext& ctx);
// A tensor split's part of the combine: out[t] = Σ_j over the pairs whose expert id is in
// [expert_begin, expert_end) (this GPU's experts) of weights · expert_out; the all-reduce adds the
// other GPUs' parts.
void gpu_moe_combine_owned(const float* expert_out, const float* weights, const int32_t* ids, int64_t n_tokens,
                           int64_t k, int64_t n, int64_t expert_begin, int64_t expert_end, float* out, GpuContext& ctx);
// out[i] = Σ_q parts[q][i] for q = 0 .. n_parts-1 in that order (at most kGpuMaxSumParts parts),
// count floats: every GPU of a tensor split sums the same parts in the same order, so all hold
// the same bits (ops_elementwise.cu).
constexpr int kGpuMaxSumParts = 8;
void gpu_sum_parts(float* out, const float* const* parts, int n_parts, int64_t count, GpuContext& ctx);

// ---- decode step ops: positions read on the device, fused passes -------------------------------
// A decode step captured as a graph (gpu_llama.cpp) is replayed at every depth, so nothing in it
// may take the position as a kernel argument: these ops read token t's position from the device
// array `positions` (for one sequence positions[t] = pos0 + t, as in Batch).

// gpu_attention with token t at positions[t] (it sees cache rows 0 .. positions[t]). With q8_out
// (a gpu_q8_view of n_tokens rows of n_head · head_dim_v), the paths that can (split decode)
// also write the output quantized there, saving the output projection a quantize launch; returns
// whether it did.
bool gpu_attention_at(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                      const GpuAttentionParams& p, float* out, GpuContext& ctx, const GpuQ8Rows* q8_out = nullptr);

// Everything between the q/k/v projections and attention, in one launch (ops_attention_prep.cu):
// per token, each of the n_head query heads of q (rows of n_head·rope.head_dim) is RMS-normed
// with q_norm and roped in place; each key head of k (kv.k_dim() per token) is normed with k_norm
// and roped, and written with the token's v row to the cache at row positions[t]. A null norm
// skips that norm. The same as gpu_rms_norm ×2 + gpu_rope ×2 + gpu_kv_store.
void gpu_qk_norm_rope_store(float* q, const float* k, const float* v, int64_t n_tokens, int64_t n_head,
                            const float* q_norm, const float* k_norm, float eps, const GpuRope& rope,
                            const int32_t* positions, GpuKvCache& kv, int64_t layer, GpuContext& ctx);

// x += y, then out = rms_norm(x) · weight (weight may be null): a block's residual add and the
// next block's norm in one pass over x (ops_fused_norm.cu). out must not alias x or y.
void gpu_add_rms_norm(float* x, const float* y, const float* weight, int64_t n_rows, int64_t n, float eps, float* out,
                      GpuContext& ctx, const GpuQ8Rows* q8 = nullptr);  // q8: as gpu_rms_norm's

// gpu_moe_combine, then out = rms_norm(x) · weight of the updated rows (ops_fused_norm.cu).
// `addend` (n_tokens rows of n, may be null) is added to x first, in the same pass: the expert
// tiers' CPU lane result, so x = (x + addend) + Σ w·out, the bits of gpu_add and then the combine.
void gpu_moe_combine_rms_norm(const float* expert_out, const float* weights, int64_t n_tokens, int64_t k, int64_t n,
                              float* x, const float* weight, float eps, float* out, GpuContext& ctx,
                              const GpuQ8Rows* q8 = nullptr, const float* addend = nullptr);

// gpu_moe_route_softmax_topk for one token, and its plan (as gpu_moe_plan would build it, with
// tiles of one pair), in one launch (ops_moe_decode.cu). Plan buffers: scratch slots [slot, slot + 2].
MoePlan gpu_moe_route_plan_single(const float* logits, int64_t n_expert, int64_t k, bool normalize, int32_t* ids,
                                  float* weights, int scratch_slot, GpuContext& ctx);
// The router's logits (router · h for one token, any weight type) and then the same routing and
// plan, in one launch: the last of its blocks routes. `counter`: a device unsigned int that is
// zero before the first call, owned by this call site (the kernel leaves it zero again).
// With an expert window (a tensor split's GPU), the plan holds only the experts in [expert_begin,
// expert_end), numbered from expert_begin; the other slots get empty tiles.
MoePlan gpu_moe_router_route_plan_single(const DeviceWeight& router, const float* h, float* logits, int64_t k,
                                         bool normalize, int32_t* ids, float* weights, int scratch_slot,
                                         unsigned* counter, GpuContext& ctx, int64_t expert_begin = 0,
                                         int64_t expert_end = INT64_MAX);

// ---- sampling (ops_sampling.cu; the host side: gpu_sampling.h) -------------------------------
// The kernel's view of a CandidateQuery.
struct GpuSelectParams {
    float temperature = 0.0f;
    int32_t top_k = 0;  // applied (below the vocabulary's size) or 0
    float top_p = 1.0f;
    float min_p = 0.0f;
    float repetition = 1.0f, presence = 0.0f, frequency = 0.0f;
    int32_t n_penalized = 0;
};

// What the kernel writes before the candidates (32 bytes, as plan/allocations.h counts it).
struct GpuCandidateHeader {
    int32_t count;
    int32_t top_k;
    float top;
    float unused;
    double sum;
    double reserved;
};

// Queues the reduction of `logits` (n_vocab floats in device memory; the penalized entries are
// changed while it runs and restored before it ends). penalized: n_penalized ids, then their
// counts; saved: n_penalized floats of scratch. out: room for n_vocab candidates.
void gpu_select_candidates(float* logits, int64_t n_vocab, const GpuSelectParams& params, const int32_t* penalized,
                           float* saved, GpuCandidateHeader* header, LogitCandidate* out, GpuContext& ctx);

}  // namespace strata::gpu
