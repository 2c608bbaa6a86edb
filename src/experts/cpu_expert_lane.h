#pragma once
// The arithmetic of the GPU expert tiers' CPU lane (gpu_tiers_lane_with_gpu.cpp): one layer
// step's misses that the CPU computes straight from the mapped file, their weighted sum per token,
// and the measurement the lanes' cost model starts from. Free of GPU code, so that it is tested
// on any machine (tests/experts/cpu_expert_lane_test.cpp).
//
//   CpuExpertLane lane;
//   lane.compute(layer, activation, {experts...}, pairs_by_expert, k, h, weights, n, n_embd, out, cpu);
//   const CpuExpertCosts c = CpuExpertLane::calibrate(layer, n_expert, n_embd, cpu);

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backend/cpu/matmul.h"
#include "core/aligned_buffer.h"
#include "experts/expert_store.h"
#include "model/blocks/moe_routing.h"

namespace strata {

struct CpuExpertCosts {
    double expert_s = 0;  // one expert for one token
    double token_s = 0;   // each further token of the same expert
};

class CpuExpertLane {
public:
    // out (n rows of n_embd) = Σ over the pairs of `experts` of weights[p] · expert(h[p / k]):
    // pairs_by_expert[x] lists expert x's pair positions (rows of k per token, as the routing has
    // them); h holds n token rows. Experts in the given order, each one's pairs in list order (the
    // sum's order). Allocates nothing once its scratch has grown to a step's size. `before_down`
    // (when set) is called as the down products begin: a reader of the sum may start to watch
    // for it then (the GPU tiers' tagged sum).
    void compute(const ExpertLayerTensors& layer, ExpertActivation activation, std::span<const int32_t> experts,
                 const std::vector<std::vector<int32_t>>& pairs_by_expert, int64_t k, const float* h,
                 const float* weights, int64_t n, int64_t n_embd, float* out, CpuContext& cpu,
                 const std::function<void()>& before_down = {});

    // The median of five runs of one expert for one token, for 8 and for 40 (the per-token slope
    // is taken between the last two), a different expert each time: one computed twice would be
    // read from the CPU's cache the second time, and the model would promise the CPU more than
    // DRAM gives it.
    static CpuExpertCosts calibrate(const ExpertLayerTensors& layer, uint32_t n_expert, int64_t n_embd, CpuContext& cpu);

private:
    // The lane's per-expert biases (gpt-oss), on its rows in lane order: gate/up (ff wide) before
    // the activation, or down (n_embd wide) after the down product.
    void add_biases(const ExpertLayerTensors& layer, std::span<const int32_t> experts,
                    const std::vector<std::vector<int32_t>>& pairs_by_expert, float* gate, float* up, int64_t ff,
                    float* down, int64_t n_embd) const;

    struct FloatScratch {
        AlignedBuffer buffer;
        float* get(size_t count) {
            if (buffer.size() < count * sizeof(float)) buffer = AlignedBuffer(count * sizeof(float) * 5 / 4);
            return reinterpret_cast<float*>(buffer.data());
        }
    } gate_, up_, down_;
    std::vector<MatmulJob> gate_up_jobs_, down_jobs_;
    std::vector<int32_t> tokens_;  // the token of each pair, in lane order
};

}  // namespace strata
