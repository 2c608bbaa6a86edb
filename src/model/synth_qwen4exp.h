#pragma once
// The synthetic Qwen3.8-Flash-Next (`strata synth --preset qwen3.8-flash-next`): a qwen4exp model
// with the tensor names, shapes and types and the metadata keys (with their GGUF value types) of
// the published GGUF files (REAL_GGUFS.md part A), random weights. The plan is data: the files to
// write (the trunk's two shards: everything, then the PLE table alone, as the published 2-shard
// packs lay it out; and the MTP sidecar), so a test holds it against the real header without
// writing 70 GB. Cuts for small disks: fewer blocks (the QSA every 4th block and the PLE block
// kept), fewer experts, fewer PLE table rows (the hash heads' primes shrink with it), a smaller
// vocabulary. docs/SYNTH_QWEN4EXP.md says which facts each mix reproduces and which are guessed.
//
//   Qwen4ExpSynthSpec spec;  spec.mix = "q2_0";  spec.n_layers = 4;  spec.ple_rows = 100000;
//   STRATA_ASSIGN_OR_RETURN(auto shards, qwen4exp_trunk_plan(spec, nullptr));
//   STRATA_TRY(write_synth_files(shards, qwen4exp_shard_paths("m.gguf", shards.size()), {.seed = 1}, progress));

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "gguf/tensor_type.h"
#include "model/synth_writer.h"

namespace strata {

// The published vocabulary's size and the ids of its end-of-turn and image tokens (REAL_GGUFS.md §A2).
constexpr uint32_t kQwen4ExpVocab = 248320;
constexpr uint32_t kQwen4ExpEos = 248044;
constexpr uint32_t kQwen4ExpImageToken = 248056;

// Which type each tensor role takes in one published file (one "mix"). Per-block exceptions list
// the blocks whose routed experts take another type.
struct Qwen4ExpMix {
    const char* name;
    const char* facts;   // one line: what is read from the real file and what is guessed
    uint32_t n_expert;
    TensorType token_embd, output, output_hc, ple_table, ple_key, ple_value;
    TensorType router, hc_matrix, attention, gdn, indexer, shared_gate_up, shared_down;
    TensorType expert_gate_up, expert_down;
    std::vector<uint32_t> gate_up_blocks;  // blocks whose gate/up take gate_up_other
    TensorType gate_up_other;
    std::vector<uint32_t> down_blocks;     // blocks whose down takes down_other
    TensorType down_other;

    TensorType gate_up_at(uint32_t block) const;
    TensorType down_at(uint32_t block) const;
};

const std::vector<Qwen4ExpMix>& qwen4exp_mixes();
const Qwen4ExpMix* find_qwen4exp_mix(const std::string& name);

struct Qwen4ExpSynthSpec {
    std::string mix = "ud-q4_k_xl";
    uint32_t n_layers = 48;          // trunk blocks; >= 2 (block 1 is the PLE block)
    uint32_t n_expert = 0;           // 0: the mix's (512; the Coder's 256)
    uint32_t n_vocab = kQwen4ExpVocab;  // without a vocabulary file: placeholder tokens up to this
    uint64_t ple_rows = 0;           // 0: the published table (320,001,536 rows); else at most this many
    uint64_t seed = 1234;            // written as synth.seed (the weights' seed, not the hash seed)
    double router_skew = 0.0;        // written as synth.router_skew when > 0
};

// The trunk: [shard 1 (metadata and every tensor but the table), shard 2 (the table alone)],
// with split.* keys as llama.cpp's gguf-split writes them. `vocab`: a GGUF whose tokenizer.*
// keys are copied (n_vocab from its token list), or null for the placeholder vocabulary.
Result<std::vector<SynthFile>> qwen4exp_trunk_plan(const Qwen4ExpSynthSpec& spec, const GgufFile* vocab);

// The MTP sidecar as unsloth publishes it (REAL_GGUFS.md §A5): block n_layers (a QSA block with an
// indexer) and the nextn.* tensors, block_count n_layers + 1, no ple.* keys; with its own
// token_embd and output (34 tensors) or without them (`-shared-`, 32).
Result<SynthFile> qwen4exp_mtp_plan(const Qwen4ExpSynthSpec& spec, const GgufFile* vocab, bool own_embeddings);

// `out.gguf` → out-00001-of-0000N.gguf ...; a name already of that form keeps its stem.
std::vector<std::string> qwen4exp_shard_paths(const std::string& output, size_t n_shards);
// `out.gguf` → out-mtp.gguf (the stem without a -0000k-of-0000N suffix).
std::string qwen4exp_mtp_path(const std::string& output);

}  // namespace strata
