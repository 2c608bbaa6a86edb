#pragma once
// The wide residual of the hyper-connection models (qwen4exp's gated residual, DeepSeek-V4's mHC):
// hc streams of n_embd per token, rows of hc·n_embd, every stream starting as the token's embedding.
//
//   float* R = start_residual_streams(embedded, n_tokens, n_embd, hc, streams_);

#include <cstdint>
#include <vector>

namespace strata {

// Sizes `streams` for n_tokens rows (kept between calls: a decode step allocates nothing once warm)
// and fills each of a token's hc streams with its embedding; returns streams.data().
float* start_residual_streams(const float* embedded, int64_t n_tokens, int64_t n_embd, int64_t hc, std::vector<float>& streams);

}  // namespace strata
