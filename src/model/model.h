#pragma once
// A loaded model: its configuration, its weights (views into the mapped GGUF) and its forward
// pass. One implementation per architecture family, in model/arch/, written from the shared
// blocks of model/blocks/.
//
//   STRATA_ASSIGN_OR_RETURN(auto model, Model::load(gguf));
//   KvCache kv = model->make_kv_cache(n_ctx);
//   model->forward(batch, kv, logits, LogitsFor::All, ctx);   // n_tokens × n_vocab floats

#include <memory>

#include "backend/cpu/cpu_context.h"
#include "core/status.h"
#include "gguf/reader.h"
#include "kv/kv_cache.h"
#include "model/blocks/blocks.h"
#include "model/config.h"

namespace strata {

enum class LogitsFor { All, Last };

class Model {
public:
    virtual ~Model() = default;
    const ModelConfig& config() const { return config_; }

    // Validates every tensor's presence, shape and type before returning; the file must outlive
    // the model (weights point into its mapping).
    static Result<std::unique_ptr<Model>> load(const GgufFile& file);

    KvCache make_kv_cache(int64_t n_ctx) const;

    // Runs the batch (positions pos0 .. pos0 + n_tokens - 1, the cache holding every earlier
    // position) and writes logits: n_tokens rows of n_vocab, or one row for the last token.
    virtual void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) = 0;

protected:
    ModelConfig config_;
};

// Architecture factories (model/arch/*.cpp).
Result<std::unique_ptr<Model>> load_llama_family(const GgufFile& file, const ModelConfig& config);

}  // namespace strata
