#include "model/quantize_model.h"

#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "gguf/writer.h"
#include "model/tensor_roles.h"
#include "quant/traits.h"

namespace strata {

namespace {

bool is_quantizable_weight(const GgufTensorInfo& t) {
    if (t.n_dims < 2) return false;  // norms, biases, scalars
    // Per-expert biases are 2-D ([n_out, n_expert]) but still biases; sinks are per-head scalars.
    if (t.name.size() >= 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0) return false;
    if (t.name.find("attn_sinks") != std::string::npos) return false;
    TensorRole role = tensor_role(t.name);
    if (role == TensorRole::Norm || role == TensorRole::Router) return false;
    if (t.name.find("ssm_conv1d") != std::string::npos) return false;  // short conv kernels: tiny
    const TensorType src = t.type;
    return src == TensorType::F32 || src == TensorType::F16 || src == TensorType::BF16 ||
           find_quant_traits(src) != nullptr;
}

// 256-value K types fall back to a 32-value type of similar size when rows are not multiples
// of 256 (llama.cpp does the same for e.g. 2880-wide gpt-oss rows).
TensorType fallback_for(TensorType target) {
    switch (target) {
        case TensorType::Q2_K:
        case TensorType::Q3_K:
        case TensorType::Q4_K: return TensorType::Q4_0;
        case TensorType::Q5_K: return TensorType::Q5_0;
        case TensorType::Q6_K: return TensorType::Q8_0;
        // The 64- and 128-value types: a 32-value type of their kind.
        case TensorType::NVFP4: return TensorType::MXFP4;
        case TensorType::Q1_0:
        case TensorType::Q2_0: return TensorType::Q4_0;
        default: return TensorType::F16;
    }
}

}  // namespace

std::string quantize_target_names() {
    size_t count = 0;
    const QuantTraits* traits = all_quant_traits(&count);
    std::string names;
    for (size_t i = 0; i < count; ++i) {
        // Weight types only: F32 stays as it is, activation-only types have no dot.
        if (!traits[i].quantize_row || !traits[i].dot || traits[i].type == TensorType::F32) continue;
        if (!names.empty()) names += ", ";
        names += tensor_type_name(traits[i].type);
    }
    return names;
}

TensorType choose_quant_type(const GgufTensorInfo& t, TensorType target) {
    if (!is_quantizable_weight(t)) return t.type;
    if (tensor_type_info(target)->row_fits(t.ne[0])) return target;
    TensorType fb = fallback_for(target);
    if (tensor_type_info(fb)->row_fits(t.ne[0])) return fb;
    return TensorType::F16;
}

Status quantize_model(const GgufFile& input, const std::string& output_path, const QuantizeOptions& options,
                      const std::function<void(uint64_t, uint64_t)>& progress) {
    const QuantTraits* target = find_quant_traits(options.type);
    if (!target || !target->quantize_row) {
        return Status::error("quantize: Strata has no quantizer for {} (choose one of {})",
                             tensor_type_name(options.type), quantize_target_names());
    }
    GgufWriter writer;
    for (const auto& e : input.metadata()) {
        if (e.key.rfind("split.", 0) == 0 || e.key == "general.file_type") continue;  // one file, new type
        writer.set(e.key, e.value);
    }
    // general.file_type uses llama.cpp's llama_ftype numbering (not ggml type ids); a file whose
    // matrices are all one K type is that type's "_S" variant there.
    static const std::pair<TensorType, uint32_t> kFileTypes[] = {
        {TensorType::F16, 1},   {TensorType::Q4_0, 2},  {TensorType::Q4_1, 3},  {TensorType::Q8_0, 7},
        {TensorType::Q5_0, 8},  {TensorType::Q5_1, 9},  {TensorType::Q2_K, 10}, {TensorType::Q3_K, 11},
        {TensorType::Q4_K, 14}, {TensorType::Q5_K, 16}, {TensorType::Q6_K, 18}, {TensorType::BF16, 32},
        {TensorType::TQ1_0, 36}, {TensorType::TQ2_0, 37}, {TensorType::MXFP4, 38}, {TensorType::NVFP4, 39},
        {TensorType::Q1_0, 40}, {TensorType::Q2_0, 41}};
    for (const auto& [type, ftype] : kFileTypes) {
        if (type == options.type) writer.set_u32("general.file_type", ftype);
    }
    if (input.alignment() != 32) STRATA_TRY(writer.set_alignment(static_cast<uint32_t>(input.alignment())));

    uint64_t total = 0;
    for (const auto& t : input.tensors()) total += t.n_elements;
    auto done = std::make_shared<uint64_t>(0);
    auto pool = std::make_shared<ThreadPool>(ThreadPool::Options{.threads = options.threads});

    for (const auto& t : input.tensors()) {
        std::vector<uint64_t> ne(t.ne, t.ne + t.n_dims);
        const TensorType out_type = choose_quant_type(t, options.type);
        const GgufTensorInfo* src = &t;
        if (out_type == t.type) {
            const uint8_t* d = input.tensor_data(t);
            STRATA_TRY(writer.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(d, d + t.n_bytes)));
            *done += t.n_elements;
            continue;
        }
        const QuantTraits& from = quant_traits(t.type);
        const QuantTraits& to = quant_traits(out_type);
        const uint64_t in_row = t.n_bytes / t.rows();
        const uint64_t out_row = tensor_type_info(out_type)->row_bytes(t.ne[0]);
        const uint8_t* base = input.tensor_data(t);
        // Rows are converted while the file is written, in pieces, so memory stays flat for
        // tensors of many GB.
        auto next_row = std::make_shared<uint64_t>(0);
        STRATA_TRY(writer.add_tensor_generator(
            t.name, out_type, ne, [src, from, to, in_row, out_row, base, next_row, pool, done, total, progress](uint8_t* dst, uint64_t n) {
                const int64_t rows = static_cast<int64_t>(n / out_row);
                const uint64_t first = *next_row;
                const int64_t width = static_cast<int64_t>(src->ne[0]);
                pool->parallel_for(rows, [&](int64_t r0, int64_t r1, int) {
                    std::vector<float> row(static_cast<size_t>(width));
                    for (int64_t r = r0; r < r1; ++r) {
                        from.dequantize_row(base + (first + static_cast<uint64_t>(r)) * in_row, row.data(), width);
                        to.quantize_row(row.data(), dst + static_cast<uint64_t>(r) * out_row, width);
                    }
                });
                *next_row += static_cast<uint64_t>(rows);
                *done += static_cast<uint64_t>(rows) * static_cast<uint64_t>(width);
                if (progress) progress(*done, total);
            }));
    }
    STRATA_TRY(writer.write(output_path));
    if (progress) progress(total, total);
    return Status::ok();
}

}  // namespace strata
