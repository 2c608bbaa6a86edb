#pragma once
// A grid of model shapes that GGUF allows but kernels are easily written to miss: expert FFN
// widths that are not whole 32-value blocks (24, 48, 80), 40 query heads and odd head counts and
// head widths, a hidden size that is not a multiple of 32, vocabularies that are not a multiple of
// 64. Widths that are not a block multiple take float (F16) weights, as a GGUF file must: the
// reader refuses a quantized row of another length. Shared by the CPU test (tests/model) and the
// GPU tests (tests/gpu), which build the same files with `write_synth_model`.
//
//   for (const OddShape& s : odd_shapes()) write_synth_model(s.spec(), nullptr, path, nullptr);

#include <string>
#include <vector>

#include "model/synth.h"

namespace strata::test {

struct OddShape {
    std::string name;
    uint32_t n_embd = 256, n_head = 4, n_head_kv = 2, head_dim = 64, n_ff_expert = 256, n_vocab = 256;

    SynthSpec spec() const {
        SynthSpec s;  // the tiny preset: 8 experts, 2 used
        s.name = "odd-" + name;
        s.n_layers = 2;
        s.n_embd = n_embd;
        s.n_head = n_head;
        s.n_head_kv = n_head_kv;
        s.head_dim = head_dim;
        s.n_ff_expert = n_ff_expert;
        s.n_vocab = n_vocab;
        const auto blocks = [](uint32_t width) { return width % 32 == 0; };
        // Each matrix's rows are as wide as its input: float where that is not whole blocks.
        const TensorType embd = blocks(n_embd) ? TensorType::Q8_0 : TensorType::F16;
        s.type_embedding = s.type_output = embd;
        s.type_attention = s.type_attention_v = blocks(n_embd) && blocks(n_head * head_dim) ? TensorType::Q8_0 : TensorType::F16;
        s.type_expert_gate_up = embd;
        s.type_expert_down = blocks(n_ff_expert) ? TensorType::Q8_0 : TensorType::F16;
        return s;
    }
};

inline std::vector<OddShape> odd_shapes() {
    return {
        {.name = "ff24", .n_ff_expert = 24},
        {.name = "ff48", .n_ff_expert = 48},
        {.name = "ff80", .n_ff_expert = 80},
        {.name = "heads40", .n_head = 40, .n_head_kv = 8, .n_ff_expert = 80},
        {.name = "heads5_dim24", .n_head = 5, .n_head_kv = 5, .head_dim = 24},
        {.name = "heads6_kv3_dim40", .n_head = 6, .n_head_kv = 3, .head_dim = 40, .n_ff_expert = 48},
        {.name = "embd200", .n_embd = 200, .n_head = 5, .n_head_kv = 1, .head_dim = 40, .n_ff_expert = 80},
        {.name = "vocab300", .n_vocab = 300},
        {.name = "vocab1000_ff24", .n_ff_expert = 24, .n_vocab = 1000},
    };
}

// Heads wider than the GPU attention takes (kGpuMaxHeadDim, 256): the CPU runs them, the GPU
// refuses them at load.
inline OddShape wide_head_shape() { return {.name = "heads2_dim320", .n_head = 2, .n_head_kv = 1, .head_dim = 320}; }

}  // namespace strata::test
