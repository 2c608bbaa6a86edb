#pragma once
// Metadata pieces the published-layout presets of `strata synth` share (model/synth_qwen4exp.h,
// model/synth_deepseek4.h): typed GGUF values as the real headers carry them, and the tokenizer of
// a GGUF given with --vocab.
//
//   keys.emplace_back("deepseek4.block_count", synth_u32(43));
//   STRATA_ASSIGN_OR_RETURN(uint32_t n_vocab, copy_tokenizer_keys(vocab_file, keys));

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "gguf/value.h"

namespace strata {

GgufValue synth_u32(uint64_t v);
GgufValue synth_i32(int64_t v);
GgufValue synth_f32(double v);

// Appends `file`'s tokenizer.* keys to `keys`; the vocabulary's size, or why the file has none.
Result<uint32_t> copy_tokenizer_keys(const GgufFile& file, std::vector<std::pair<std::string, GgufValue>>& keys);

}  // namespace strata
