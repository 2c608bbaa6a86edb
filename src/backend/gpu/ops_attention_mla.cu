// Multi-head latent attention (gpu_ops_mla.h): the checks, the split of the keys across blocks
// and the launches of kernels/attention_mla.cuh. CPU reference: cpu_attention with one KV head
// (backend/cpu/attention.cpp); parity tests in tests/gpu/op_parity_mla_test.cpp.
//
// One kernel serves decode steps and prompts. The (token, head) rows are cut into tiles of 32;
// when the tiles alone do not fill the GPU (decode: 128 heads × one token are 4 tiles on a
// 132-SM H200) the keys are cut into n_split slices as well, each block writes its rows' partial
// softmax for its slice to scratch, and a merge kernel combines them. n_split (the grid) depends
// only on the row count, the cache capacity and the device, never on the positions, which the
// blocks read on the device: a one-token step captured in a graph replays at any depth. Slices
// past a shallow step's keys write a neutral partial (max = -inf) that the merge skips.
#include <algorithm>
#include <cstdint>

#include "backend/gpu/gpu_ops_mla.h"
#include "backend/gpu/kernels/attention_mla.cuh"
#include "backend/gpu/kernels/common.cuh"

namespace strata::gpu {

namespace {

// Blocks wanted per SM: two fit at once (registers ~2 × 128 threads × ~200, shared memory
// 2 × 26 KiB), each computing while the other waits at a barrier for its staged chunk.
constexpr int kMlaBlocksPerSm = 2;
// The GpuContext scratch slot of the split partials (documented in gpu_ops_mla.h): above
// kGpuAttentionScratchSlot (48), which gpu_attention's split path uses in the same step.
constexpr int kMlaScratchSlot = kGpuMlaScratchSlot;

int64_t mla_blocks_wanted(const GpuContext& ctx) {
    return static_cast<int64_t>(kMlaBlocksPerSm) * std::max(1, ctx.device().multiprocessors);
}

// Partial rows the scratch holds: one size per device, whatever the shape, so that no call moves
// it under a captured graph. Splitting stops at blocks_wanted blocks (row tiles × n_split), so
// the entries (rows × n_split ≤ tiles × kRows × n_split) never exceed this. About 17 MiB on an
// H200 (264 × 32 rows of 514 floats).
int64_t mla_scratch_entries(const GpuContext& ctx) { return mla_blocks_wanted(ctx) * MlaTile::kRows; }

// Slices per row tile: enough blocks to fill the device, slices of at least one key tile, from
// the cache capacity (the depth is on the device).
int mla_split_count(int64_t n_rows, int64_t n_ctx, const GpuContext& ctx) {
    const int64_t tiles = (n_rows + MlaTile::kRows - 1) / MlaTile::kRows;
    const int64_t by_device = mla_blocks_wanted(ctx) / tiles;
    const int64_t by_keys = (n_ctx + MlaTile::kKeys - 1) / MlaTile::kKeys;
    return static_cast<int>(std::max<int64_t>(1, std::min({by_device, by_keys, static_cast<int64_t>(kMlaMaxSplit)})));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename KV>
void launch_mla(const float* q, const GpuKvCache& kv, int64_t layer, const int32_t* positions, const MlaDims& dims,
                int n_split, float* out, float* part_ml, float* part_acc, vendor::Stream stream) {
    const dim3 grid(static_cast<unsigned>((dims.n_rows + MlaTile::kRows - 1) / MlaTile::kRows),
                    static_cast<unsigned>(n_split));
    mla_attention_tile_kernel<KV><<<grid, MlaTile::kThreads, 0, stream>>>(
        q, static_cast<const KV*>(kv.keys(layer)), static_cast<const KV*>(kv.values(layer)), positions, dims, n_split,
        out, part_ml, part_acc);
    STRATA_GPU_LAUNCHED();
}

}  // namespace

void gpu_attention_mla(const float* q, const GpuKvCache& kv, int64_t layer, int64_t n_tokens, const int32_t* positions,
                       const GpuMlaParams& p, float* out, GpuContext& ctx) {
    STRATA_CHECK(p.n_head >= 1, "gpu_attention_mla: n_head must be at least 1");
    STRATA_CHECK(p.kv_lora_rank >= 8 && p.kv_lora_rank <= kGpuMaxMlaLatent && p.kv_lora_rank % 8 == 0,
                 "gpu_attention_mla: kv_lora_rank must be a multiple of 8 in [8, kGpuMaxMlaLatent = 512]");
    STRATA_CHECK(p.rope_dims >= 0 && p.rope_dims <= kGpuMaxMlaRope && p.rope_dims % 8 == 0,
                 "gpu_attention_mla: rope_dims must be a multiple of 8 in [0, kGpuMaxMlaRope = 64]");
    STRATA_CHECK(kv.k_dim() == p.kv_lora_rank + p.rope_dims && kv.v_dim() == p.kv_lora_rank,
                 "gpu_attention_mla: the cache rows must be kv_lora_rank + rope_dims (keys) and kv_lora_rank "
                 "(values) wide");
    STRATA_CHECK(n_tokens >= 0 && n_tokens <= kv.n_ctx(), "gpu_attention_mla: more tokens than the cache holds");
    STRATA_CHECK(positions != nullptr, "gpu_attention_mla: positions (device) are required");
    // 16-byte loads and stores of rows (every row length is a multiple of 8 elements).
    STRATA_CHECK(aligned16(q) && aligned16(out) && aligned16(kv.keys(layer)) && aligned16(kv.values(layer)),
                 "gpu_attention_mla: q, out and the cache rows must be 16-byte aligned");
    if (n_tokens == 0) return;
    // A q8_0 cache: the rows just stored in f16 into the staging copy are quantized, the rest
    // read back (the copy is one layer's, shared by all layers).
    if (kv.stored_type() == KvCacheType::Q8_0) gpu_kv_q8_sync(kv, layer, positions, 0, n_tokens, ctx);

    const MlaDims dims{.n_rows = n_tokens * p.n_head, .n_head = p.n_head, .latent = p.kv_lora_rank,
                       .width = p.kv_lora_rank + p.rope_dims, .n_ctx = kv.n_ctx(), .scale = p.scale};
    const int n_split = mla_split_count(dims.n_rows, kv.n_ctx(), ctx);
    float* part_ml = nullptr;
    float* part_acc = nullptr;
    if (n_split > 1) {
        const int64_t max_entries = mla_scratch_entries(ctx);
        STRATA_CHECK(dims.n_rows * n_split <= max_entries,
                     "gpu_attention_mla: more split partials than the scratch holds");
        // Fixed offsets within a fixed size: the same addresses for every shape on this device.
        const auto floats = static_cast<uint64_t>(max_entries * (2 + kGpuMaxMlaLatent));
        part_ml = ctx.scratch_floats(kMlaScratchSlot, floats);
        part_acc = part_ml + 2 * max_entries;  // 2 · entries floats: 16-byte aligned (entries = 32 · blocks)
    }
    const vendor::Stream stream = stream_of(ctx);
    if (kv.type() == KvCacheType::F16) {
        launch_mla<uint16_t>(q, kv, layer, positions, dims, n_split, out, part_ml, part_acc, stream);
    } else {
        launch_mla<float>(q, kv, layer, positions, dims, n_split, out, part_ml, part_acc, stream);
    }
    if (n_split > 1) {
        mla_merge_kernel<<<static_cast<unsigned>(dims.n_rows), kMlaMergeThreads, 0, stream>>>(
            part_ml, part_acc, n_split, dims.latent, out);
        STRATA_GPU_LAUNCHED();
    }
}

}  // namespace strata::gpu
