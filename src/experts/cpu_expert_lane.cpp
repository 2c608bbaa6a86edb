#include "experts/cpu_expert_lane.h"

#include <algorithm>
#include <chrono>

#include "backend/cpu/ops.h"

namespace strata {

void CpuExpertLane::compute(const ExpertLayerTensors& layer, ExpertActivation activation, std::span<const int32_t> experts,
                            const std::vector<std::vector<int32_t>>& pairs_by_expert, int64_t k, const float* h,
                            const float* weights, int64_t n, int64_t n_embd, float* out, CpuContext& cpu,
                            const std::function<void()>& before_down) {
    const int64_t ff = layer.gate.ne[1];
    int64_t rows = 0;
    for (int32_t x : experts) rows += static_cast<int64_t>(pairs_by_expert[static_cast<size_t>(x)].size());
    float* gate = gate_.get(static_cast<size_t>(rows * ff));
    float* up = up_.get(static_cast<size_t>(rows * ff));
    float* down = down_.get(static_cast<size_t>(rows * n_embd));
    // The jobs name their tokens' rows of h (one quantized copy of the batch for all experts).
    tokens_.resize(static_cast<size_t>(rows));
    gate_up_jobs_.clear(), down_jobs_.clear();
    int64_t row = 0;
    for (int32_t x : experts) {
        const auto& list = pairs_by_expert[static_cast<size_t>(x)];
        const int64_t m = static_cast<int64_t>(list.size());
        for (int64_t i = 0; i < m; ++i) tokens_[static_cast<size_t>(row + i)] = static_cast<int32_t>(list[static_cast<size_t>(i)] / k);
        const int32_t* tokens = tokens_.data() + row;
        gate_up_jobs_.push_back({&layer.gate, x, h, m, gate + row * ff, tokens, n});
        gate_up_jobs_.push_back({&layer.up, x, h, m, up + row * ff, tokens, n});
        down_jobs_.push_back({&layer.down, x, gate + row * ff, m, down + row * n_embd});
        row += m;
    }
    cpu_matmul_grouped(gate_up_jobs_, cpu);
    if (layer.biased()) add_biases(layer, experts, pairs_by_expert, gate, up, ff, nullptr, 0);
    apply_expert_activation(activation, gate, up, row * ff);
    if (before_down) before_down();
    cpu_matmul_grouped(down_jobs_, cpu);
    if (layer.down_bias) add_biases(layer, experts, pairs_by_expert, nullptr, nullptr, ff, down, n_embd);
    std::fill(out, out + n * n_embd, 0.0f);
    row = 0;
    for (int32_t x : experts) {
        for (int32_t p : pairs_by_expert[static_cast<size_t>(x)]) {
            float* xt = out + (p / k) * n_embd;
            const float w = weights[p];
            const float* o = down + row * n_embd;
            for (int64_t d = 0; d < n_embd; ++d) xt[d] += w * o[d];
            ++row;
        }
    }
}

void CpuExpertLane::add_biases(const ExpertLayerTensors& layer, std::span<const int32_t> experts,
                               const std::vector<std::vector<int32_t>>& pairs_by_expert, float* gate, float* up,
                               int64_t ff, float* down, int64_t n_embd) const {
    int64_t row = 0;
    for (int32_t x : experts) {
        const int64_t m = static_cast<int64_t>(pairs_by_expert[static_cast<size_t>(x)].size());
        if (gate && layer.gate_bias) cpu_add_bias(gate + row * ff, layer.gate_bias.f32() + x * ff, m, ff);
        if (up && layer.up_bias) cpu_add_bias(up + row * ff, layer.up_bias.f32() + x * ff, m, ff);
        if (down) cpu_add_bias(down + row * n_embd, layer.down_bias.f32() + x * n_embd, m, n_embd);
        row += m;
    }
}

CpuExpertCosts CpuExpertLane::calibrate(const ExpertLayerTensors& layer, uint32_t n_expert, int64_t n_embd, CpuContext& cpu) {
    using Clock = std::chrono::steady_clock;
    // The slope per token is taken between 8 and 40 tokens, both past the first group of four
    // that streams the weights through a tile (backend/cpu/matmul.cpp): between 1 and 8 tokens
    // the slope missed most of the compute (8 tokens cost little more than 1, whose pass reads the
    // weights from DRAM anyway), the lane took prompt experts of ~256 tokens it ran at half the
    // predicted speed, and a 10 GiB pp4096 dropped from 11,541 to 7,031 tok/s
    // (bench/results/2026-11-30-tiers-split).
    constexpr int64_t kFew = 8, kMany = 40;
    const int64_t ff = layer.gate.ne[1];
    std::vector<float> x(static_cast<size_t>(kMany * n_embd), 0.01f), g(static_cast<size_t>(kMany * ff)), u(g.size()),
        d(static_cast<size_t>(kMany * n_embd));
    int64_t next = 0;
    auto run = [&](int64_t m) {
        std::vector<double> times;
        for (int rep = 0; rep < 5; ++rep) {
            const int64_t ex = next++ % static_cast<int64_t>(n_expert);
            const auto t0 = Clock::now();
            std::vector<MatmulJob> gu{{&layer.gate, ex, x.data(), m, g.data()}, {&layer.up, ex, x.data(), m, u.data()}};
            cpu_matmul_grouped(gu, cpu);
            cpu_swiglu(g.data(), u.data(), m * ff);
            std::vector<MatmulJob> dn{{&layer.down, ex, g.data(), m, d.data()}};
            cpu_matmul_grouped(dn, cpu);
            times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
        std::sort(times.begin(), times.end());
        return times[times.size() / 2];
    };
    const double one = run(1);
    const double few = run(kFew);
    return {one, std::max(0.0, (run(kMany) - few) / static_cast<double>(kMany - kFew))};
}

}  // namespace strata
