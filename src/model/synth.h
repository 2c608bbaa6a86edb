#pragma once
// Synthetic models: GGUF files with the exact tensor names, shapes and types of a real model,
// filled with random but numerically sane weights. Speed does not depend on the values, so these
// stand in for real checkpoints in benchmarks (real weights cannot be downloaded everywhere), and
// a tiny one lets a fresh machine run Strata end to end.
//
//   SynthSpec spec = synth_preset("qwen3-30b-a3b").value();
//   spec.router_skew = 1.0;                       // Zipf-like expert popularity
//   STRATA_TRY(write_synth_model(spec, nullptr, "synth.gguf", print_progress));

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "gguf/reader.h"
#include "gguf/tensor_type.h"
#include "model/synth_writer.h"  // SynthProgress

namespace strata {

// A qwen3moe-architecture model (the architecture of Qwen3-30B-A3B and Qwen3-235B-A22B).
struct SynthSpec {
    std::string name = "synth";
    uint32_t n_layers = 4;
    uint32_t n_embd = 256;
    uint32_t n_head = 4;
    uint32_t n_head_kv = 2;
    uint32_t head_dim = 64;
    uint32_t n_expert = 8;
    uint32_t n_expert_used = 2;
    uint32_t n_ff_expert = 256;
    uint32_t n_ff_dense = 768;   // written as feed_forward_length (unused by qwen3moe)
    uint32_t n_vocab = 256;      // replaced by the vocabulary's size when one is given
    uint32_t context_length = 4096;
    float rope_base = 1e6f;
    float rms_eps = 1e-6f;

    TensorType type_embedding = TensorType::Q8_0;
    TensorType type_attention = TensorType::Q8_0;  // attn_q, attn_k, attn_output
    TensorType type_attention_v = TensorType::Q8_0;
    TensorType type_expert_gate_up = TensorType::Q8_0;
    TensorType type_expert_down = TensorType::Q8_0;
    TensorType type_output = TensorType::Q8_0;

    // 0: every expert equally likely (in use too: see qk_norm_mean). s > 0: router row of the
    // expert ranked r (in a random permutation per layer) is scaled by (r+1)^-s, so a few experts
    // win most tokens.
    double router_skew = 0.0;
    uint64_t seed = 1234;

    // Attention as trained models have it, so that routing stays as uniform in use as the routers
    // were drawn. With q/k norm weights near 1 the attention logits spread about 1, every token
    // attends to its whole context nearly evenly, and each block adds the context's mean to the
    // residual stream: a component common to a sequence's tokens that grows with depth and that
    // the routers then read. The 48-layer benchmark model sent 58-76% of its deep layers' tokens
    // to 10% of their experts that way (bench/results/2026-11-30-split-feedback), and expert
    // caches were measured on that concentration. Norm weights near 6 (logits spread ~36:
    // attention on a few positions) and an output projection at 0.3 of its fan-in scale keep a
    // 32-layer model's layers within sampling noise of uniform (tests/model/synth_routing_test.cpp).
    float qk_norm_mean = 6.0f;            // q/k norm weights: this mean, spread 10% of it
    float attention_output_scale = 0.3f;  // attn_output's spread, times 1/sqrt(fan-in)
};

// Named shapes: "tiny" (a few MB, for smoke runs) and "qwen3-30b-a3b" (the benchmark model of
// docs/BENCHMARKS.md: 48 layers, 128 experts, Q4_K/Q6_K like a Q4_K_M file).
Result<SynthSpec> synth_preset(const std::string& name);
std::vector<std::string> synth_preset_names();

// Writes the model. When `vocab` is given its tokenizer.* metadata is copied (and n_vocab taken
// from it); otherwise a byte-level vocabulary of n_vocab tokens is written (the 256 bytes, then
// placeholders).
Status write_synth_model(const SynthSpec& spec, const GgufFile* vocab, const std::string& path,
                         const SynthProgress& progress);

}  // namespace strata
