#include "model/weights.h"

#include "quant/traits.h"

namespace strata {

namespace {
std::string shape_text(std::initializer_list<int64_t> shape) {
    std::string s = "[";
    bool first = true;
    for (int64_t d : shape) {
        s += (first ? "" : ", ") + std::to_string(d);
        first = false;
    }
    return s + "]";
}
}  // namespace

Weight WeightLoader::load(const std::string& name, std::initializer_list<int64_t> shape, bool required, bool f32_only,
                          bool i32_only) {
    Weight w;
    const GgufTensorInfo* t = file_.tensor(name);
    if (!t) {
        if (required && status_) {
            status_ = Status::error("{}: tensor {} is missing (expected shape {}); the file may be for another "
                                    "variant of the architecture",
                                    file_.path(), name, shape_text(shape));
        }
        return w;
    }
    bool same = t->n_dims >= 1 && shape.size() >= 1;
    size_t i = 0;
    for (int64_t d : shape) {
        if (i >= 4 || static_cast<int64_t>(t->ne[i]) != d) same = false;
        ++i;
    }
    for (; i < 4; ++i) {
        if (t->ne[i] != 1) same = false;
    }
    if (!same) {
        if (status_) {
            status_ = Status::error("{}: tensor {}: expected shape {}, got {}", file_.path(), name, shape_text(shape),
                                    t->shape_string());
        }
        return w;
    }
    if (f32_only && t->type != TensorType::F32) {
        if (status_) status_ = Status::error("{}: tensor {}: expected F32, got {}", file_.path(), name, tensor_type_name(t->type));
        return w;
    }
    if (i32_only != (t->type == TensorType::I32)) {
        if (status_) {
            status_ = Status::error("{}: tensor {}: {}, got {}", file_.path(), name,
                                    i32_only ? "expected I32" : "an I32 tensor cannot be multiplied", tensor_type_name(t->type));
        }
        return w;
    }
    const QuantTraits* q = find_quant_traits(t->type);
    if (!i32_only && (!q || !q->dot)) {
        if (status_) {
            status_ = Status::error("{}: tensor {} has type {}, which Strata cannot compute with", file_.path(), name,
                                    tensor_type_name(t->type));
        }
        return w;
    }
    w.info = t;
    w.data = file_.tensor_data(*t);
    w.type = t->type;
    for (int d = 0; d < 4; ++d) w.ne[d] = static_cast<int64_t>(t->ne[d]);
    w.row_bytes = tensor_type_info(t->type)->row_bytes(t->ne[0]);
    return w;
}

Weight WeightLoader::require(const std::string& name, std::initializer_list<int64_t> shape) {
    return load(name, shape, true, false);
}
Weight WeightLoader::optional(const std::string& name, std::initializer_list<int64_t> shape) {
    return load(name, shape, false, false);
}
Weight WeightLoader::require_f32(const std::string& name, std::initializer_list<int64_t> shape) {
    return load(name, shape, true, true);
}
Weight WeightLoader::require_widened_f32(const std::string& name, std::initializer_list<int64_t> shape,
                                         std::deque<std::vector<float>>& storage) {
    Weight w = load(name, shape, true, false);
    if (!w || w.type == TensorType::F32) return w;
    if (w.type != TensorType::F16 && w.type != TensorType::BF16) {
        if (status_) status_ = Status::error("{}: tensor {}: expected F32, F16 or BF16, got {}", file_.path(), name, tensor_type_name(w.type));
        return Weight{};
    }
    const int64_t rows = w.rows();
    std::vector<float>& values = storage.emplace_back(static_cast<size_t>(rows * w.ne[0]));
    const QuantTraits& q = quant_traits(w.type);
    for (int64_t r = 0; r < rows; ++r) q.dequantize_row(w.row(r), values.data() + r * w.ne[0], w.ne[0]);
    w.data = reinterpret_cast<const uint8_t*>(values.data());
    w.type = TensorType::F32;
    w.row_bytes = static_cast<uint64_t>(w.ne[0]) * sizeof(float);
    return w;
}

Weight WeightLoader::require_i32(const std::string& name, std::initializer_list<int64_t> shape) {
    return load(name, shape, true, false, true);
}
Weight WeightLoader::optional_f32(const std::string& name, std::initializer_list<int64_t> shape) {
    return load(name, shape, false, true);
}

void WeightLoader::embedding_and_head(int64_t n_embd, int64_t n_vocab, Weight& token_embd, Weight& output_norm,
                                      Weight& output) {
    token_embd = require("token_embd.weight", {n_embd, n_vocab});
    output_norm = require_f32("output_norm.weight", {n_embd});
    output = optional("output.weight", {n_embd, n_vocab});
    if (!output) output = token_embd;  // tied embeddings
}

}  // namespace strata
