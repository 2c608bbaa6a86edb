#pragma once
// The architectures Strata runs, one row each: the GGUF name, the recipe family that loads its
// weights and runs its forward pass (CPU and GPU), and what the rest of the engine needs to know
// about it. Code asks the row (or switches over ArchFamily, so that the compiler names every place
// a new family must be handled) instead of comparing architecture names.
//
//   const ArchitectureInfo* a = find_architecture("qwen3moe");   // null: not supported
//   if (a->traits.recurrent_state) ...
//   switch (architecture(cfg.arch).family) { case ArchFamily::Llama: ... }
//
// Adding an architecture: an Arch value and its row here (architecture.cpp), its hyper-parameter
// keys (a reader in the row), and a recipe: a family's weight loader and forward pass in
// model/arch/ (CPU) and model/gpu/ (GPU), or a new family. docs/ARCHITECTURE.md lists the files.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "backend/rope_style.h"
#include "core/status.h"

namespace strata {

class GgufFile;
struct ModelConfig;

enum class Arch : uint8_t { Llama, Qwen3, Qwen3Moe, Deepseek2, GptOss, Qwen3Next, Qwen35Moe, Qwen4Exp, Deepseek4 };

// The recipe an architecture shares with its relatives: one weight loader and one forward pass
// per family, which read the differences from the config and the row's traits.
enum class ArchFamily : uint8_t {
    Llama,      // llama, qwen3, qwen3moe: grouped-query attention, SwiGLU or routed experts
    GptOss,     // the llama recipe with biases, sinks, sliding layers and clamped SwiGLU experts
    Deepseek2,  // MLA attention over a latent cache, shared + grouped routed experts
    Hybrid,     // qwen3next, qwen35moe: gated DeltaNet layers and gated full attention
    Qwen4Exp,   // qwen4exp: the hybrid's layers on hyper-connected residual streams, QSA, PLE
    Deepseek4,  // deepseek4: mHC streams, sliding + compressed MQA attention with sinks, hash/score MoE
};

struct ArchTraits {
    bool qk_norm = false;           // per-head RMS norms of q and k (qwen3)
    bool recurrent_state = false;   // layers with a fixed-size state besides the KV cache
    bool gpu_forward = false;       // a GPU forward pass exists
};

struct ArchitectureInfo {
    Arch id;
    std::string_view name;  // general.architecture, as llama.cpp's converter writes it
    ArchFamily family;
    RopeStyle rope_style;   // how the converter arranged the q/k weights (llama.cpp's rope type)
    ArchTraits traits;
    // The architecture's own metadata keys (prefix "<name>."), after the common ones; null: none.
    Status (*read_keys)(const GgufFile& file, const std::string& prefix, ModelConfig& config);
};

std::span<const ArchitectureInfo> architectures();
const ArchitectureInfo* find_architecture(std::string_view name);
const ArchitectureInfo& architecture(Arch id);
// "llama, qwen3, ...": every name, for messages; `gpu_only`: those with a GPU forward pass.
std::string architecture_names(bool gpu_only = false);

}  // namespace strata
