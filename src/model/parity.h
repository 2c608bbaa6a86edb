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
    std::string device;  // where the model ran (Model::device_name)
};

class Model;
// How the model is loaded: Model::load (the CPU) unless a backend's loader is given.
using ModelLoader = std::function<Result<std::unique_ptr<Model>>(const GgufFile&)>;

// chunk = 0 feeds all tokens as one batch; chunk = k feeds them k at a time through the KV cache.
Result<ParityReport> run_parity(const std::string& model_path, const std::string& ref_path, int64_t chunk,
                                ThreadPool& pool, const ModelLoader& load = nullptr);

}  // namespace strata
