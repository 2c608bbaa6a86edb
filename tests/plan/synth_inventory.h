#pragma once
// The inventory (config + tensor list) of a `strata synth` model without writing it: the benchmark
// model is 18 GiB, far too big for a test, and the planner reads only shapes. The tensor list and
// metadata below mirror model/synth.cpp; SynthInventory.MatchesWrittenFiles checks them against
// files that write_synth_model really wrote, so a change to the generator shows up there.
//
//   ModelInventory inv = synth_inventory(synth_preset("qwen3-30b-a3b").value());

#include <gtest/gtest.h>

#include <string>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/synth.h"
#include "plan/model_bytes.h"
#include "support/scratch.h"

namespace strata::test {

inline GgufTensorInfo synth_tensor(const std::string& name, TensorType type, std::vector<uint64_t> ne) {
    GgufTensorInfo t;
    t.name = name;
    t.type = type;
    t.n_dims = static_cast<uint32_t>(ne.size());
    t.n_elements = 1;
    for (size_t i = 0; i < ne.size(); ++i) {
        t.ne[i] = ne[i];
        t.n_elements *= ne[i];
    }
    t.n_bytes = tensor_type_info(type)->row_bytes(ne[0]) * (t.n_elements / ne[0]);
    return t;
}

// The metadata keys write_synth_model writes that ModelConfig reads (tokenizer: 256 byte tokens).
inline GgufWriter synth_metadata(const SynthSpec& s) {
    GgufWriter w;
    const std::string a = "qwen3moe.";
    w.set_string("general.architecture", "qwen3moe");
    w.set_string("general.name", s.name);
    w.set_u32(a + "block_count", s.n_layers);
    w.set_u32(a + "context_length", s.context_length);
    w.set_u32(a + "embedding_length", s.n_embd);
    w.set_u32(a + "feed_forward_length", s.n_ff_dense);
    w.set_u32(a + "attention.head_count", s.n_head);
    w.set_u32(a + "attention.head_count_kv", s.n_head_kv);
    w.set_f32(a + "rope.freq_base", s.rope_base);
    w.set_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
    w.set_u32(a + "expert_count", s.n_expert);
    w.set_u32(a + "expert_used_count", s.n_expert_used);
    w.set_u32(a + "attention.key_length", s.head_dim);
    w.set_u32(a + "attention.value_length", s.head_dim);
    w.set_u32(a + "expert_feed_forward_length", s.n_ff_expert);
    w.set_u32(a + "vocab_size", s.n_vocab);
    return w;
}

inline ModelInventory synth_inventory(const SynthSpec& s) {
    ModelInventory inv;
    inv.name = s.name;
    // The config comes from real metadata (a GGUF without tensors), so ModelConfig's own reading
    // of the keys is what the planner sees.
    ScratchDir dir;
    const std::string path = dir.path("meta.gguf");
    EXPECT_TRUE(synth_metadata(s).write(path));
    auto meta = GgufFile::open(path);
    EXPECT_TRUE(meta) << meta.status().message();
    if (!meta) return inv;
    auto cfg = ModelConfig::from_gguf(*meta);
    EXPECT_TRUE(cfg) << cfg.status().message();
    if (cfg) inv.config = *cfg;

    const uint64_t e = s.n_embd, q = uint64_t(s.n_head) * s.head_dim, kv = uint64_t(s.n_head_kv) * s.head_dim;
    auto& t = inv.tensors;
    t.push_back(synth_tensor("token_embd.weight", s.type_embedding, {e, s.n_vocab}));
    for (uint32_t l = 0; l < s.n_layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        t.push_back(synth_tensor(b + "attn_norm.weight", TensorType::F32, {e}));
        t.push_back(synth_tensor(b + "attn_q.weight", s.type_attention, {e, q}));
        t.push_back(synth_tensor(b + "attn_k.weight", s.type_attention, {e, kv}));
        t.push_back(synth_tensor(b + "attn_v.weight", s.type_attention_v, {e, kv}));
        t.push_back(synth_tensor(b + "attn_output.weight", s.type_attention, {q, e}));
        t.push_back(synth_tensor(b + "attn_q_norm.weight", TensorType::F32, {s.head_dim}));
        t.push_back(synth_tensor(b + "attn_k_norm.weight", TensorType::F32, {s.head_dim}));
        t.push_back(synth_tensor(b + "ffn_norm.weight", TensorType::F32, {e}));
        t.push_back(synth_tensor(b + "ffn_gate_inp.weight", TensorType::F32, {e, s.n_expert}));
        t.push_back(synth_tensor(b + "ffn_gate_exps.weight", s.type_expert_gate_up, {e, s.n_ff_expert, s.n_expert}));
        t.push_back(synth_tensor(b + "ffn_down_exps.weight", s.type_expert_down, {s.n_ff_expert, e, s.n_expert}));
        t.push_back(synth_tensor(b + "ffn_up_exps.weight", s.type_expert_gate_up, {e, s.n_ff_expert, s.n_expert}));
    }
    t.push_back(synth_tensor("output_norm.weight", TensorType::F32, {e}));
    t.push_back(synth_tensor("output.weight", s.type_output, {e, s.n_vocab}));
    return inv;
}

}  // namespace strata::test
