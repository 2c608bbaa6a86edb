#pragma once
// What the tests of models split over GPUs (layer and tensor splits) share: the second GPU to
// split onto, and the logits of a fixed prompt and a few decode steps to compare.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "backend/gpu/device_runtime.h"
#include "model/model.h"

namespace strata::test {

// The second GPU when there is one, else the first again (a one-GPU machine splits one card).
inline int second_gpu() {
    std::vector<gpu::DeviceInfo> devices;
    std::string why;
    return gpu::find_devices(&devices, &why) && devices.size() >= 2 ? 1 : 0;
}

// The logits of a 12-token prompt (every row) and of 4 decode steps after it.
inline std::vector<float> split_test_logits(Model& m, CpuContext& cpu) {
    const int64_t prompt = 12, steps = 4, vocab = m.config().n_vocab;
    std::vector<int32_t> tokens(prompt + steps), positions(prompt + steps);
    for (int64_t i = 0; i < prompt + steps; ++i) {
        tokens[i] = static_cast<int32_t>((i * 7 + 3) % vocab), positions[i] = static_cast<int32_t>(i);
    }
    KvCache kv = m.make_kv_cache(prompt + steps);
    std::vector<float> out(static_cast<size_t>((prompt + steps) * vocab));
    m.forward(Batch{tokens.data(), positions.data(), prompt, 0}, kv, out.data(), LogitsFor::All, cpu);
    for (int64_t i = prompt; i < prompt + steps; ++i) {
        m.forward(Batch{&tokens[i], &positions[i], 1, i}, kv, out.data() + i * vocab, LogitsFor::Last, cpu);
    }
    return out;
}

}  // namespace strata::test
