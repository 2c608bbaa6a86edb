#pragma once
// Random weights at memcpy speed for `strata synth`: a pool of blocks of one quant type, made once
// from Gaussian values (the type's reference quantizer, or random valid i-quant blocks scaled to
// the asked spread), from which tensors of tens of GB are filled block by block. The values are
// realistic per block (real scales, real code distributions) without quantizing every row.
//
//   std::mt19937_64 rng(seed);
//   SynthBlockPool pool(TensorType::Q4_K, 1.0f / 48, rng);
//   pool.fill(dst, n_bytes, rng);   // n_bytes: whole blocks

#include <cstdint>
#include <random>
#include <vector>

#include "gguf/tensor_type.h"

namespace strata {

// Whether synth can write random weights of this type that Strata can also compute with: a type
// with a quantizer, or an i-quant whose fp16 super-scale comes first in its block (IQ1_M keeps
// its scale in the sub-scales' spare bits, so it cannot be rescaled that way).
bool synth_can_write(TensorType type);

class SynthBlockPool {
public:
    SynthBlockPool(TensorType type, float stddev, std::mt19937_64& rng);
    void fill(uint8_t* dst, uint64_t n_bytes, std::mt19937_64& rng) const;

private:
    void random_scaled_blocks(TensorType type, float stddev, std::mt19937_64& rng);

    static constexpr int kBlocksPerRow = 64;
    uint32_t block_bytes_ = 0;
    uint64_t n_blocks_ = 0;
    std::vector<uint8_t> pool_;
};

}  // namespace strata
