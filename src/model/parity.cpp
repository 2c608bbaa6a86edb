#include "model/parity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "model/model.h"

namespace strata {

Result<ParityReport> run_parity(const std::string& model_path, const std::string& ref_path, int64_t chunk,
                                ThreadPool& pool, const ModelLoader& load, GgufLoad file_load) {
    STRATA_ASSIGN_OR_RETURN(GgufFile model_file, GgufFile::open(model_path, {}, file_load));
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

    CpuContext ctx(pool, model->cpu_tuning());
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
        double token_err = 0.0, token_norm = 0.0;
        for (int64_t i = 0; i < n_vocab; ++i) {
            const double d = static_cast<double>(g[i]) - w[i];
            token_err += d * d;
            token_norm += static_cast<double>(w[i]) * w[i];
            r.max_abs_diff = std::max(r.max_abs_diff, std::abs(d));
        }
        err += token_err, norm += token_norm;
        r.token_nmse.push_back(token_norm > 0 ? token_err / token_norm : token_err);
        if (std::max_element(g, g + n_vocab) - g == std::max_element(w, w + n_vocab) - w) ++r.top1_agree;
    }
    r.nmse = norm > 0 ? err / norm : err;
    return r;
}

ParityVerdict judge_parity(const ParityReport& r, double max_nmse, double min_top1, int64_t max_outliers) {
    // A flipped route is orders of magnitude off; positions merely near the limit (rounding
    // noise of one position is larger than of the mean) stay in the rest.
    constexpr double kOutlierFactor = 10.0;
    ParityVerdict v;
    const bool top1_ok = static_cast<double>(r.top1_agree) >= min_top1 * static_cast<double>(r.n_tokens);
    v.nmse_without_outliers = r.nmse;
    if (r.nmse <= max_nmse) {
        v.pass = top1_ok;
        return v;
    }
    if (r.top1_agree != r.n_tokens) return v;  // outliers are allowed only where every arg-max agrees
    double sum = 0.0;
    int64_t kept = 0;
    for (int64_t t = 0; t < static_cast<int64_t>(r.token_nmse.size()); ++t) {
        const double e = r.token_nmse[static_cast<size_t>(t)];
        if (e > kOutlierFactor * max_nmse) {
            v.outliers.push_back(t);
        } else {
            sum += e;
            ++kept;
        }
    }
    // Per-position NMSEs averaged: the positions' logits have norms of one order in the fixtures.
    v.nmse_without_outliers = kept > 0 ? sum / static_cast<double>(kept) : 0.0;
    v.pass = static_cast<int64_t>(v.outliers.size()) <= max_outliers && v.nmse_without_outliers <= max_nmse;
    return v;
}

}  // namespace strata
