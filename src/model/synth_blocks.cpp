#include "model/synth_blocks.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/fp16.h"
#include "model/random_weights.h"
#include "quant/iq1.h"
#include "quant/iq2.h"
#include "quant/iq3.h"
#include "quant/iq4.h"
#include "quant/traits.h"

namespace strata {

// The i-quants synth can write: their fp16 d comes first and scales the whole block.
static_assert(offsetof(BlockIq2Xxs, d) == 0 && offsetof(BlockIq2Xs, d) == 0 && offsetof(BlockIq2S, d) == 0);
static_assert(offsetof(BlockIq3Xxs, d) == 0 && offsetof(BlockIq3S, d) == 0 && offsetof(BlockIq1S, d) == 0);
static_assert(offsetof(BlockIq4Nl, d) == 0 && offsetof(BlockIq4Xs, d) == 0);

bool synth_can_write(TensorType t) {
    const QuantTraits* q = find_quant_traits(t);
    if (!q || !q->dot) return false;
    if (q->quantize_row) return true;
    switch (t) {
        case TensorType::IQ2_XXS: case TensorType::IQ2_XS: case TensorType::IQ2_S: case TensorType::IQ3_XXS:
        case TensorType::IQ3_S: case TensorType::IQ1_S: case TensorType::IQ4_NL: case TensorType::IQ4_XS:
            return true;
        default:
            return false;  // IQ1_M: its scale is spread over the sub-scales' spare bits
    }
}

SynthBlockPool::SynthBlockPool(TensorType type, float stddev, std::mt19937_64& rng) {
    const TensorTypeInfo* info = tensor_type_info(type);
    const QuantTraits& q = quant_traits(type);
    block_bytes_ = info->block_bytes;
    constexpr int kRowsOfBlocks = 64;
    const int64_t n = static_cast<int64_t>(info->block_size) * kBlocksPerRow;
    std::normal_distribution<float> gauss(0.0f, stddev);
    std::vector<float> values(static_cast<size_t>(n));
    pool_.resize(static_cast<size_t>(kRowsOfBlocks) * kBlocksPerRow * block_bytes_);
    if (!q.quantize_row) {
        random_scaled_blocks(type, stddev, rng);
    } else {
        for (int r = 0; r < kRowsOfBlocks; ++r) {
            for (auto& v : values) v = gauss(rng);
            q.quantize_row(values.data(), pool_.data() + static_cast<size_t>(r) * kBlocksPerRow * block_bytes_, n);
        }
    }
    n_blocks_ = static_cast<uint64_t>(kRowsOfBlocks) * kBlocksPerRow;
}

void SynthBlockPool::fill(uint8_t* dst, uint64_t n_bytes, std::mt19937_64& rng) const {
    for (uint64_t off = 0; off < n_bytes; off += block_bytes_) {
        uint64_t pick = rng() % n_blocks_;
        std::copy_n(pool_.data() + pick * block_bytes_, std::min<uint64_t>(block_bytes_, n_bytes - off), dst + off);
    }
}

// Types without a reference quantizer here (the i-quants): random valid blocks (random codes, grid
// indices and sub-scales), each scaled through its fp16 super-scale d, which these formats keep
// first in the block and which multiplies every value, to the spread asked for.
void SynthBlockPool::random_scaled_blocks(TensorType type, float stddev, std::mt19937_64& rng) {
    const int64_t block_values = tensor_type_info(type)->block_size;
    std::mt19937 block_rng(static_cast<uint32_t>(rng()));
    const RandomWeight random = make_random_block_weight(type, block_values * kBlocksPerRow,
                                                         int64_t(pool_.size() / block_bytes_ / kBlocksPerRow), 1, block_rng);
    std::memcpy(pool_.data(), random.bytes.data(), pool_.size());
    std::vector<float> v(static_cast<size_t>(block_values));
    for (size_t off = 0; off < pool_.size(); off += block_bytes_) {
        quant_traits(type).dequantize_row(pool_.data() + off, v.data(), block_values);
        double sum_sq = 0.0;
        for (float x : v) sum_sq += double(x) * x;
        const double rms = std::sqrt(sum_sq / double(block_values));
        uint16_t d = 0;
        std::memcpy(&d, pool_.data() + off, sizeof(d));
        d = fp32_to_fp16(static_cast<float>(double(fp16_to_fp32(d)) * (rms > 0 ? stddev / rms : 0.0)));
        std::memcpy(pool_.data() + off, &d, sizeof(d));
    }
}

}  // namespace strata
