#include "model/parity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "model/model.h"

namespace strata {

Result<ParityReport> run_parity(const std::string& model_path, const std::string& ref_path, int64_t chunk,
                                ThreadPool& pool, const ModelLoader& load) {
    STRATA_ASSIGN_OR_RETURN(GgufFile model_file, GgufFile::open(model_path));
    STRATA_ASSIGN_OR_RETURN(GgufFile ref, GgufFile::open(ref_path));
    const GgufTensorInfo* tokens_info = ref.tensor("tokens");
    const GgufTensorInfo* logits_info = ref.tensor("logits");
    if (!tokens_info || tokens_info->type != TensorType::I32 || !logits_info || logits_info->type != TensorType::F32) {
        return Status::error("{}: expected tensors `tokens` (I32) and `logits` (F32) of a reference file", ref_path);
    }
    STRATA_ASSIGN_OR_RETURN(auto model, load ? load(model_file) : Model::load(model_file));
    const ModelConfig& cfg = model->config();
    const int64_t n = static_cast<int64_t>(tokens_info->ne[0]);
    const int64_t n_vocab = static_cast<int64_t>(logits_info->ne[0]);
    if (n_vocab != cfg.n_vocab || static_cast<int64_t>(logits_info->ne[1]) != n) {
        return Status::error("{}: logits shape {} does not match {} tokens × vocabulary {}", ref_path,
                             logits_info->shape_string(), n, cfg.n_vocab);
    }
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    std::memcpy(tokens.data(), ref.tensor_data(*tokens_info), tokens.size() * sizeof(int32_t));
    for (int32_t t : tokens) {
        if (t < 0 || t >= static_cast<int32_t>(cfg.n_vocab)) return Status::error("{}: token id {} outside the vocabulary", ref_path, t);
    }
    const float* want = reinterpret_cast<const float*>(ref.tensor_data(*logits_info));

    CpuContext ctx(pool);
    KvCache kv = model->make_kv_cache(n);
    std::vector<float> got(static_cast<size_t>(n * n_vocab));
    std::vector<int32_t> positions(static_cast<size_t>(n));
    std::iota(positions.begin(), positions.end(), 0);
    const int64_t step = chunk <= 0 ? n : chunk;
    for (int64_t p = 0; p < n; p += step) {
        const int64_t m = std::min(step, n - p);
        Batch batch{tokens.data() + p, positions.data() + p, m, p};
        model->forward(batch, kv, got.data() + p * n_vocab, LogitsFor::All, ctx);
    }

    ParityReport r;
    r.n_tokens = n;
    r.n_vocab = n_vocab;
    r.device = model->device_name();
    double err = 0.0, norm = 0.0;
    for (int64_t t = 0; t < n; ++t) {
        const float* g = got.data() + t * n_vocab;
        const float* w = want + t * n_vocab;
        for (int64_t i = 0; i < n_vocab; ++i) {
            const double d = static_cast<double>(g[i]) - w[i];
            err += d * d;
            norm += static_cast<double>(w[i]) * w[i];
            r.max_abs_diff = std::max(r.max_abs_diff, std::abs(d));
        }
        if (std::max_element(g, g + n_vocab) - g == std::max_element(w, w + n_vocab) - w) ++r.top1_agree;
    }
    r.nmse = norm > 0 ? err / norm : err;
    return r;
}

}  // namespace strata
