#pragma once
// Compares the engine's logits with a reference file (testdata/models/<name>.ref.gguf layout:
// tensor `tokens` I32 [n], tensor `logits` F32 [n_vocab, n]). Used by `strata parity` and tests.
//
//   auto r = run_parity("qwen3moe.gguf", "qwen3moe.ref.gguf", /*chunk=*/0, pool);
//   r->nmse;        // Σ(got - ref)² / Σ ref² over all positions
//   r->top1_agree;  // positions whose arg-max matches

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"

namespace strata {

struct ParityReport {
    int64_t n_tokens = 0;
    int64_t n_vocab = 0;
    double nmse = 0.0;
    double max_abs_diff = 0.0;
    int64_t top1_agree = 0;
    std::string device;             // where the model ran (Model::device_name)
    std::vector<double> token_nmse; // per position: Σ(got - ref)² / Σ ref² of its logits
};

// Whether a report matches its reference. Strict: the NMSE over all positions within the limit
// and the arg-max agreeing on at least min_top1 of them. A MoE model whose router has a near-tie
// at some position (two experts' probabilities a few 1e-4 apart) can route that position
// differently under any rounding change — f16 activations on tensor cores, another summation
// order — which changes its logits (and those of later positions that read it) far more than
// rounding does. So up to max_outliers positions may be far (10×) over the limit if every
// position's arg-max agrees and the NMSE over the others stays within it; the verdict names them.
struct ParityVerdict {
    bool pass = false;
    std::vector<int64_t> outliers;  // positions far over the limit, when they were allowed
    double nmse_without_outliers = 0.0;
};
ParityVerdict judge_parity(const ParityReport& r, double max_nmse, double min_top1, int64_t max_outliers);

class Model;
// How the model is loaded: Model::load (the CPU) unless a backend's loader is given.
using ModelLoader = std::function<Result<std::unique_ptr<Model>>(const GgufFile&)>;

// chunk = 0 feeds all tokens as one batch; chunk = k feeds them k at a time through the KV cache.
// `file_load`: how the model file is opened (--load).
Result<ParityReport> run_parity(const std::string& model_path, const std::string& ref_path, int64_t chunk,
                                ThreadPool& pool, const ModelLoader& load = nullptr, GgufLoad file_load = GgufLoad::Map);

}  // namespace strata
