#pragma once
// A toy MoE model small enough to plan by hand: the byte counts below are chosen (not derived
// from tensor types) so every number of a plan can be written out in a comment.
//
//   config: 2 layers, n_embd 64, 4 heads of 16 (2 KV heads), 4 experts (2 used) of width 32,
//           vocab 100, no dense FFN.
//   tensors (bytes):
//     token_embd 6400 ([64, 100]: 64 per row)     output 6400     output_norm 256
//     per layer: attn_q 4096, attn_k 2048, attn_v 2048, attn_output 4096, attn_norm 256,
//                ffn_norm 256, ffn_gate_inp 1024                         = 13824 dense
//                ffn_gate_exps 4096, ffn_up_exps 4096 ([64, 32, 4]: 1024 per expert),
//                ffn_down_exps 4000 ([32, 64, 4]: 1000 per expert)        = 12192 experts
//   dense 2·13824 + 6400 + 256 + 6400 = 40704; in VRAM (embedding on the host) 34304
//   experts 2·12192 = 24384 in 8 experts; a slot is 1024 + 1024 + align256(1000) = 3072
//   total 65088

#include <string>
#include <vector>

#include "plan/model_bytes.h"

namespace strata::test {

inline GgufTensorInfo toy_tensor(const std::string& name, std::vector<uint64_t> ne, uint64_t bytes) {
    GgufTensorInfo t;
    t.name = name;
    t.n_dims = static_cast<uint32_t>(ne.size());
    t.n_elements = 1;
    for (size_t i = 0; i < ne.size(); ++i) {
        t.ne[i] = ne[i];
        t.n_elements *= ne[i];
    }
    t.n_bytes = bytes;
    return t;
}

inline ModelConfig toy_config() {
    ModelConfig c;
    c.arch = Arch::Qwen3Moe;
    c.n_layer = 2;
    c.n_embd = 64;
    c.n_vocab = 100;
    c.n_ctx_train = 4096;
    c.n_head = 4;
    c.n_head_kv = 2;
    c.head_dim_k = c.head_dim_v = 16;
    c.n_ff = 0;
    c.n_expert = 4;
    c.n_expert_used = 2;
    c.n_ff_expert = 32;
    return c;
}

inline ModelInventory toy_inventory(bool with_experts = true) {
    ModelInventory inv;
    inv.name = "toy";
    inv.config = toy_config();
    if (!with_experts) inv.config.n_expert = inv.config.n_expert_used = 0;
    auto& t = inv.tensors;
    t.push_back(toy_tensor("token_embd.weight", {64, 100}, 6400));
    for (int l = 0; l < 2; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        t.push_back(toy_tensor(b + "attn_q.weight", {64, 64}, 4096));
        t.push_back(toy_tensor(b + "attn_k.weight", {64, 32}, 2048));
        t.push_back(toy_tensor(b + "attn_v.weight", {64, 32}, 2048));
        t.push_back(toy_tensor(b + "attn_output.weight", {64, 64}, 4096));
        t.push_back(toy_tensor(b + "attn_norm.weight", {64}, 256));
        t.push_back(toy_tensor(b + "ffn_norm.weight", {64}, 256));
        if (with_experts) {
            t.push_back(toy_tensor(b + "ffn_gate_inp.weight", {64, 4}, 1024));
            t.push_back(toy_tensor(b + "ffn_gate_exps.weight", {64, 32, 4}, 4096));
            t.push_back(toy_tensor(b + "ffn_up_exps.weight", {64, 32, 4}, 4096));
            t.push_back(toy_tensor(b + "ffn_down_exps.weight", {32, 64, 4}, 4000));
        } else {
            // The dense variant: one FFN of width 32 instead (gate, up, down of 2048 bytes each).
            t.push_back(toy_tensor(b + "ffn_gate.weight", {64, 32}, 2048));
            t.push_back(toy_tensor(b + "ffn_up.weight", {64, 32}, 2048));
            t.push_back(toy_tensor(b + "ffn_down.weight", {32, 64}, 2048));
        }
    }
    t.push_back(toy_tensor("output_norm.weight", {64}, 256));
    t.push_back(toy_tensor("output.weight", {64, 100}, 6400));
    if (!with_experts) inv.config.n_ff = 32;
    return inv;
}

}  // namespace strata::test
