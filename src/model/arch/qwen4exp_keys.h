#pragma once
// The metadata keys of qwen4exp (Qwen3.8-Flash-Next) beyond the common ones: the hybrid stack's
// ssm.* keys, the hyper-connections, QSA's indexer and compress ratios, the PLE block's n-gram
// hash constants and the MTP block count. Read for the architecture's row (model/architecture.cpp).

#include <string>

#include "core/status.h"
#include "gguf/reader.h"
#include "model/config.h"

namespace strata {

// Refuses, with the key named, what the recipe cannot run: a missing or zero size, PLE arrays
// that do not match ngram_size and heads_per_ngram, a PLE block that is not a DeltaNet block, a
// compress ratio on a DeltaNet block.
Status read_qwen4exp_keys(const GgufFile& f, const std::string& prefix, ModelConfig& c);

// The keys qwen3next, qwen35moe and qwen4exp share (model/architecture.cpp).
Status read_hybrid_keys(const GgufFile& f, const std::string& prefix, ModelConfig& c);

}  // namespace strata
