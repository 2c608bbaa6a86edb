#pragma once
// Random test inputs for comparing an op with its reference (the op-parity tests, `strata devices
// --selftest`): normal floats, and weight tensors of any registered format with a Weight view of
// their bytes. make_random_weight quantizes normal floats with the format's reference quantizer,
// or, for formats without one (the i-quants), draws random valid blocks; make_random_block_weight
// always draws random blocks, which reach bit patterns a quantizer never writes.
//
//   std::mt19937 rng(1);
//   RandomWeight w = make_random_weight(TensorType::Q4_K, 512, 96, 1, rng);   // w.view: a Weight
//   RandomWeight iq = make_random_weight(TensorType::IQ2_XXS, 512, 96, 1, rng);   // random blocks
//   std::vector<float> x = random_normal_floats(rng, 512);

#include <cstdint>
#include <random>
#include <vector>

#include "gguf/tensor_type.h"
#include "model/weights.h"

namespace strata {

std::vector<float> random_normal_floats(std::mt19937& rng, size_t n, float scale = 1.0f);

struct RandomWeight {
    std::vector<uint8_t> bytes;
    Weight view;  // [n_in, n_out, n_matrices] over bytes
};
// `n_in` must be a multiple of the format's block size.
RandomWeight make_random_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng);
// Every block random bytes, redrawn until the format's reference dequantizer turns it into finite
// values whose largest magnitude lies in [1/256, 256]: random scales, codes and grid indices,
// without knowing where a format keeps them.
RandomWeight make_random_block_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices,
                                      std::mt19937& rng);

}  // namespace strata
