#pragma once
// How rotary position embedding pairs a head's dimensions: a parameter of the rope ops (CPU and
// GPU) that the architecture decides (model/architecture.h).

namespace strata {

enum class RopeStyle {
    Normal,  // rotate pairs (x[2i], x[2i+1]) — llama, mixtral, deepseek2
    Neox,    // rotate halves (x[i], x[i + d/2]) — qwen3, qwen3moe, gpt-oss, qwen3next
};

}  // namespace strata
