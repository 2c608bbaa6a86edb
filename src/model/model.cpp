#include "model/model.h"

#include "core/check.h"

namespace strata {

Result<std::unique_ptr<Model>> Model::load(const GgufFile& file) {
    STRATA_ASSIGN_OR_RETURN(ModelConfig config, ModelConfig::from_gguf(file));
    switch (architecture(config.arch).family) {
        case ArchFamily::Llama: return load_llama_family(file, config);
        case ArchFamily::GptOss: return load_gpt_oss(file, config);
        case ArchFamily::Deepseek2: return load_deepseek2(file, config);
        case ArchFamily::Hybrid: return load_qwen3next(file, config);
        case ArchFamily::Qwen4Exp: return load_qwen4exp(file, config);
        case ArchFamily::Deepseek4: return load_deepseek4(file, config);
    }
    return Status::error("{}: no forward pass for architecture {}", file.path(), config.arch_name());
}

KvCache Model::make_kv_cache(int64_t n_ctx) const {
    // The planner's context_memory (plan/allocations.cpp) counts the same layers.
    std::vector<bool> attention(config_.n_layer);
    for (uint32_t il = 0; il < config_.n_layer; ++il) attention[il] = !config_.is_recurrent_layer(il);
    return KvCache(attention, n_ctx, config_.kv_dim_k(), config_.kv_dim_v(), kv_type_);
}

void Model::fetch_logits(const DeviceLogitsRow&, float*) {
    STRATA_CHECK(false, "fetch_logits on a model that keeps no logits on a device");
}

void Model::select_candidates(const DeviceLogitsRow&, const CandidateQuery&, CandidateSet&) {
    STRATA_CHECK(false, "select_candidates on a model that keeps no logits on a device");
}

}  // namespace strata
