#pragma once
// The synthetic DeepSeek-V4-Flash (`strata synth --preset deepseek-v4-flash`): a deepseek4 model with
// the tensor names, shapes and types and the metadata keys of the published GGUF files (REAL_GGUFS.md
// part B: the 1,328 tensors of §B3, the keys of §B2), random weights, one file as antirez's ds4
// files are. The plan is data, so a test holds it against the published sizes without writing
// 80 GB: the ds4 "q2" mix sums to the 86,714,775,900 tensor bytes §B3 derives from the real file,
// the "q4" mix to 164,628,167,004. Cuts for small disks: fewer blocks (the ratio pattern 0, 0, 4,
// 128, 4, ... and the three hash-routed blocks kept), fewer experts, a smaller vocabulary.
//
//   Deepseek4SynthSpec spec;  spec.mix = "ds4-q2";  spec.n_layers = 6;  spec.n_expert = 16;
//   STRATA_ASSIGN_OR_RETURN(SynthFile file, deepseek4_plan(spec, nullptr));
//   STRATA_TRY(write_synth_files({file}, {"m.gguf"}, {.seed = 1}, progress));

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "gguf/tensor_type.h"
#include "model/synth_writer.h"

namespace strata {

constexpr uint32_t kDeepseek4Vocab = 129280;

// Which type each tensor role takes in one published file.
struct Deepseek4Mix {
    const char* name;
    const char* facts;  // one line: where the types come from
    TensorType token_embd, output, attention, shared_expert, expert_gate_up, expert_down;
    TensorType router, hc, compressor, indexer;  // the F16 roles of the ds4 files
};

const std::vector<Deepseek4Mix>& deepseek4_mixes();
const Deepseek4Mix* find_deepseek4_mix(const std::string& name);

struct Deepseek4SynthSpec {
    std::string mix = "ds4-q2";
    uint32_t n_layers = 43;                // >= 4: two sliding-only blocks, then 4 and 128 alternating
    uint32_t n_expert = 256;               // routed experts per block; 6 used (all when fewer)
    uint32_t n_vocab = kDeepseek4Vocab;    // without a vocabulary file: byte tokens and placeholders up to this
    uint64_t seed = 1234;
    double router_skew = 0.0;
};

// The whole model in one file. `vocab`: a GGUF whose tokenizer.* keys are copied, or null for the
// placeholder vocabulary.
Result<SynthFile> deepseek4_plan(const Deepseek4SynthSpec& spec, const GgufFile* vocab);

}  // namespace strata
