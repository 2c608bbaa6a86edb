#include "model/random_weights.h"

#include "quant/traits.h"

namespace strata {

std::vector<float> random_normal_floats(std::mt19937& rng, size_t n, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

RandomWeight make_random_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng) {
    RandomWeight w;
    const uint64_t row_bytes = tensor_type_info(type)->row_bytes(static_cast<uint64_t>(n_in));
    const int64_t rows = n_out * n_matrices;
    w.bytes.resize(row_bytes * static_cast<uint64_t>(rows));
    const QuantizeRowFn quantize = quant_traits(type).quantize_row;
    for (int64_t r = 0; r < rows; ++r) {
        const std::vector<float> values = random_normal_floats(rng, static_cast<size_t>(n_in));
        quantize(values.data(), w.bytes.data() + static_cast<uint64_t>(r) * row_bytes, n_in);
    }
    w.view.data = w.bytes.data();
    w.view.type = type;
    w.view.ne[0] = n_in, w.view.ne[1] = n_out, w.view.ne[2] = n_matrices;
    w.view.row_bytes = row_bytes;
    return w;
}

}  // namespace strata
