#pragma once
// The metadata keys of deepseek4 (DeepSeek-V4-Flash) beyond the common ones, as llama.cpp's
// converter writes them (NEW_ARCHS.md §B2): the low-rank q and grouped output, the sliding
// window, the compress ratios and their rope, the lightning indexer, the manifold
// hyper-connections, hash routing, sqrt-softplus scoring, the SwiGLU clamps, YaRN and the MTP
// block count. Read for the architecture's row (model/architecture.cpp).

#include <string>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/config.h"

namespace strata {

// Refuses, with the key named, a missing key the recipe needs and what it cannot run: compress
// ratios other than 0, 4 and 128 (or fewer than the blocks), a gating function other than
// sqrt-softplus, heads that do not split into the output groups, a rope wider than the heads.
Status read_deepseek4_keys(const GgufFile& f, const std::string& prefix, ModelConfig& c);

}  // namespace strata
