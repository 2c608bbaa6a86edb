#pragma once
// A synthetic model as data, then written: each file (split shard) is its metadata and its tensors,
// each tensor with how its values are drawn. A plan costs no disk, so tests can hold a 70 GB
// model's header against the published one; write_synth_files streams the bytes (generated
// 64 MiB at a time), so no tensor ever sits whole in RAM.
//
//   SynthFile f;
//   f.metadata.emplace_back("general.architecture", GgufValue::make_string("qwen4exp"));
//   f.tensors.push_back({"blk.0.hc_attn_norm.weight", TensorType::F32, {10240}, SynthFill::Gaussian, 1.0f, 0.1f});
//   STRATA_TRY(write_synth_files({f}, {"m.gguf"}, {.seed = 1234}, progress));

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "gguf/tensor_type.h"
#include "gguf/value.h"

namespace strata {

enum class SynthFill {
    Gaussian,  // N(a, b²): matrices (a = 0, b = 1/sqrt(fan-in)), norms (a near 1)
    Uniform,   // U(a, b), float types only
    Router,    // N(0, b²) rows scaled by expert popularity (SynthWriteOptions::router_skew), float types only
    Indices,   // integers uniform in [a, b), I32 only: ids into another dimension (DeepSeek-V4's token → expert table)
};

struct SynthTensor {
    std::string name;
    TensorType type = TensorType::F32;
    std::vector<uint64_t> ne;  // GGUF order: the row length first
    SynthFill fill = SynthFill::Gaussian;
    float a = 0.0f, b = 0.0f;

    uint64_t elements() const;
    uint64_t bytes() const;
};

struct SynthFile {
    std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
    std::vector<SynthTensor> tensors;

    const GgufValue* find(const std::string& key) const;
    uint64_t tensor_bytes() const;
};

struct SynthWriteOptions {
    uint64_t seed = 1234;
    // 0: every expert equally likely. s > 0: the router row of the expert ranked r (in a random
    // permutation per tensor) is scaled by (r+1)^-s, so a few experts win most tokens.
    double router_skew = 0.0;
};

// Called with (bytes written, total bytes) as the files are written.
using SynthProgress = std::function<void(uint64_t done, uint64_t total)>;

// Writes files[i] to paths[i]. Each tensor draws from its own generator (seeded by the seed, the
// file and its position): the same plan and seed give the same bytes.
Status write_synth_files(const std::vector<SynthFile>& files, const std::vector<std::string>& paths,
                         const SynthWriteOptions& options, const SynthProgress& progress);

}  // namespace strata
