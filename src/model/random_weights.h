#pragma once
// Random test inputs for comparing an op with its reference (the op-parity tests, `strata devices
// --selftest`): normal floats, and weight tensors quantized from them by the format's reference
// quantizer, with a Weight view of their bytes.
//
//   std::mt19937 rng(1);
//   RandomWeight w = make_random_weight(TensorType::Q4_K, 512, 96, 1, rng);   // w.view: a Weight
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
RandomWeight make_random_weight(TensorType type, int64_t n_in, int64_t n_out, int64_t n_matrices, std::mt19937& rng);

}  // namespace strata
