#include "model/random_weights.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/check.h"
#include "quant/traits.h"

namespace strata {

namespace {

// Bounds of a random block's largest magnitude: wide enough for every scale code to occur, narrow
// enough that every block counts in a normalized error and that f16 (the tensor-core kernel's
// staging type) holds the values.
constexpr float kMinBlockMagnitude = 1.0f / 256.0f, kMaxBlockMagnitude = 256.0f;
constexpr int kMaxDraws = 10000;

void random_block(TensorType type, const TensorTypeInfo& info, uint8_t* dst, std::mt19937& rng) {
    const DequantizeRowFn dequantize = quant_traits(type).dequantize_row;
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<float> values(info.block_size);
    for (int draw = 0; draw < kMaxDraws; ++draw) {
        for (uint32_t i = 0; i < info.block_bytes; ++i) dst[i] = static_cast<uint8_t>(byte(rng));
        dequantize(dst, values.data(), info.block_size);
        float amax = 0.0f;
        bool finite = true;
        for (const float v : values) {
            finite = finite && std::isfinite(v);
            amax = std::max(amax, std::fabs(v));
        }
        if (finite && amax >= kMinBlockMagnitude && amax <= kMaxBlockMagnitude) return;
    }
    const std::string message = "no random " + std::string(info.name) + " block decodes to values in [1/256, 256]";
    STRATA_CHECK(false, message.c_str());
}

enum class Fill { QuantizeOrBlocks, Blocks };

RandomWeight make(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng, Fill fill) {
    const TensorTypeInfo& info = *tensor_type_info(type);
    STRATA_CHECK(info.row_fits(static_cast<uint64_t>(n_in)), "random weight rows must be whole blocks");
    RandomWeight w;
    const uint64_t row_bytes = info.row_bytes(static_cast<uint64_t>(n_in));
    const int64_t rows = n_out * n_matrices;
    w.bytes.resize(row_bytes * static_cast<uint64_t>(rows));
    const QuantizeRowFn quantize = fill == Fill::QuantizeOrBlocks ? quant_traits(type).quantize_row : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
        uint8_t* row = w.bytes.data() + static_cast<uint64_t>(r) * row_bytes;
        if (quantize) {
            const std::vector<float> values = random_normal_floats(rng, static_cast<size_t>(n_in));
            quantize(values.data(), row, n_in);
        } else {
            for (uint64_t b = 0; b < row_bytes / info.block_bytes; ++b) random_block(type, info, row + b * info.block_bytes, rng);
        }
    }
    w.view.data = w.bytes.data();
    w.view.type = type;
    w.view.ne[0] = n_in, w.view.ne[1] = n_out, w.view.ne[2] = n_matrices;
    w.view.row_bytes = row_bytes;
    return w;
}

}  // namespace

std::vector<float> random_normal_floats(std::mt19937& rng, size_t n, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

RandomWeight make_random_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng) {
    return make(type, n_in, n_out, n_matrices, rng, Fill::QuantizeOrBlocks);
}

RandomWeight make_random_block_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices,
                                      std::mt19937& rng) {
    return make(type, n_in, n_out, n_matrices, rng, Fill::Blocks);
}

}  // namespace strata
