#pragma once
// The CPU attention's softmax over one head's scores (backend/cpu/attention.cpp), before the
// weighted sum of the values: the largest score, then each weight e^(score − max) and their sum.
// Weights of scores more than `floor` below the largest are 0 (see attention.cpp for why).
//
//   const SoftmaxWeightKernels& k = softmax_weight_kernels();
//   const float max = k.max(scores, n, sink_logit);
//   const float sum = k.weights(scores, n, max, -50.0f);   // scores now hold the weights
//
// The AVX2 kernels take eight scores at a time, e^x by backend/cpu/exp_avx2.h (within ~2 ulp of
// std::exp) and the sum in eight lanes; the scalar ones use std::exp and one running sum. Each
// machine's attention is deterministic, the same for a prompt batch and for decode.

#include <cstdint>

namespace strata {

// max(init, scores[0..n)).
using ScoreMaxFn = float (*)(const float* scores, int64_t n, float init);
// scores[j] = e^(scores[j] − max), or 0 where scores[j] − max < floor; returns Σ scores[j].
using SoftmaxWeightsFn = float (*)(float* scores, int64_t n, float max, float floor);
struct SoftmaxWeightKernels {
    ScoreMaxFn max;
    SoftmaxWeightsFn weights;
};

const SoftmaxWeightKernels& softmax_weight_kernels_scalar();
const SoftmaxWeightKernels& softmax_weight_kernels_avx2();  // AVX2 + FMA CPUs only
// The fastest set this CPU runs; the scalar one when floor may reach where e^x underflows
// (below −87: exp8 clamps there), as STRATA_CPU_ATTN_ALL_EXP=1 asks.
const SoftmaxWeightKernels& softmax_weight_kernels(float floor);

}  // namespace strata
