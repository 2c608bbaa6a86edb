#pragma once
// The attention paths that gpu_attention / gpu_attention_at (ops_attention.cu) choose between,
// each in its own file:
//   rows  (ops_attention.cu)        one block per (query token, head) over all its keys: any shape;
//   split (ops_attention_split.cu)  few query tokens over a deep cache: a block per (token, head,
//                                   slice of keys), then a merge; the slice count is fixed by the
//                                   cache's capacity, so a captured graph replays at any depth;
//   flash (ops_attention_flash.cu)  prompt batches: a block per (tile of query tokens, head),
//                                   each key and value tile staged in shared memory once for
//                                   the whole query tile.
#include <cstdint>

#include "backend/gpu/gpu_ops.h"

namespace strata::gpu {

// One attention call as the public entry points received it. Token t sits at positions[t] when
// `positions` is set (device memory, read by the kernels), else at pos0 + t.
struct AttentionCall {
    const float* q;
    const GpuKvCache* kv;
    int64_t layer, n_tokens;
    const int32_t* positions;
    int64_t pos0;
    GpuAttentionParams p;
    float* out;
    GpuQ8Rows q8_out;  // when set: out also written quantized here (rows of n_head · head_dim_v), if the path can
};

// Batches of fewer tokens than this go to split or rows; flash tiles hold 32 or 64 query tokens.
constexpr int64_t kAttentionFlashMinTokens = 32;

// Key slices the split path would cut each (token, head) into: 1 means the split path would not
// help (too few keys or enough blocks already), and the rows path should run. Depends only on
// what the host knows for every replay: the shape, the cache capacity (or pos0 when the
// positions are on the host) and the device.
int attention_split_count(const AttentionCall& call, const GpuContext& ctx);
// Partials in ctx's scratch slot kGpuAttentionScratchSlot, then the merge: two launches.
// Returns whether it also wrote call.q8_out (set, and head_dim_v a multiple of 32).
bool launch_attention_split(const AttentionCall& call, int n_split, GpuContext& ctx);

// False (nothing launched) when the flash kernels do not take this shape (head dim above 128).
bool launch_attention_flash(const AttentionCall& call, GpuContext& ctx);

}  // namespace strata::gpu
