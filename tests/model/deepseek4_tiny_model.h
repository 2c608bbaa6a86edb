#pragma once
// A tiny deepseek4 GGUF with random weights, written for the tests that need the recipe's
// machinery rather than a reference (batch against token by token, chunked prompts, checkpoints,
// load refusals): the layer kinds of NEW_ARCHS.md §B4.1 (sliding on blocks 0-1, CSA with its
// indexer on 2 and 4, HCA on 3; hash routing on 0-2), every tensor F32 so that nothing rounds.
//
//   test::ScratchDir dir;
//   const std::string path = write_tiny_deepseek4(dir.path("ds4.gguf"));

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gguf/writer.h"

namespace strata::test {

struct TinyDeepseek4 {
    uint32_t layers = 5, embd = 64, heads = 4, head_dim = 64, rope = 16, q_lora = 32, groups = 2, lora = 16;
    uint32_t experts = 8, used = 2, ff = 32, hc = 4, window = 8, index_heads = 4, index_dim = 32, top_k = 4;
    uint32_t vocab = 96, hash_layers = 3;
    std::vector<int32_t> ratios = {0, 0, 4, 128, 4};
    // Called on the writer after the keys are set, before the tensors (a test's edit).
    std::function<void(GgufWriter&)> edit_keys;
    std::string drop_tensor;  // a tensor left out
    bool mtp = false;         // one MTP block after the trunk (nextn_predict_layers 1), written last
    int32_t bad_expert_id = -1;  // >= 0: token 7's first expert in block 1's tid2eid (a corrupt table)
};

inline std::string write_tiny_deepseek4(const std::string& path, const TinyDeepseek4& m = {}, uint32_t seed = 7) {
    GgufWriter w;
    const std::string p = "deepseek4.";
    w.set_string("general.architecture", "deepseek4");
    const uint32_t blocks = m.layers + (m.mtp ? 1 : 0);
    w.set_u32(p + "block_count", blocks);
    if (m.mtp) w.set_u32(p + "nextn_predict_layers", 1);
    w.set_u32(p + "context_length", 4096);
    w.set_u32(p + "embedding_length", m.embd);
    w.set_u32(p + "vocab_size", m.vocab);
    w.set_u32(p + "attention.head_count", m.heads);
    w.set_u32(p + "attention.head_count_kv", 1);
    w.set_u32(p + "attention.key_length", m.head_dim);
    w.set_u32(p + "attention.value_length", m.head_dim);
    w.set_f32(p + "attention.layer_norm_rms_epsilon", 1e-6f);
    w.set_f32(p + "rope.freq_base", 10000.0f);
    w.set_u32(p + "rope.dimension_count", m.rope);
    w.set_string(p + "rope.scaling.type", "yarn");
    w.set_f32(p + "rope.scaling.factor", 16.0f);
    w.set_u32(p + "rope.scaling.original_context_length", 65536);
    w.set_f32(p + "rope.scaling.yarn_beta_fast", 32.0f);
    w.set_f32(p + "rope.scaling.yarn_beta_slow", 1.0f);
    w.set_u32(p + "expert_count", m.experts);
    w.set_u32(p + "expert_used_count", m.used);
    w.set_u32(p + "expert_feed_forward_length", m.ff);
    w.set_u32(p + "expert_shared_count", 1);
    w.set_f32(p + "expert_weights_scale", 1.5f);
    w.set_bool(p + "expert_weights_norm", true);
    w.set_u32(p + "expert_gating_func", 4);
    w.set_f32_array(p + "swiglu_clamp_exp", std::vector<float>(blocks, 10.0f));
    w.set_f32_array(p + "swiglu_clamp_shexp", std::vector<float>(blocks, 10.0f));
    w.set_u32(p + "attention.q_lora_rank", m.q_lora);
    w.set_u32(p + "attention.sliding_window", m.window);
    w.set_u32(p + "attention.indexer.head_count", m.index_heads);
    w.set_u32(p + "attention.indexer.key_length", m.index_dim);
    w.set_u32(p + "attention.indexer.top_k", m.top_k);
    w.set_u32(p + "attention.output_group_count", m.groups);
    w.set_u32(p + "attention.output_lora_rank", m.lora);
    std::vector<int32_t> ratios = m.ratios;
    if (m.mtp) ratios.push_back(0);  // the MTP block slides only
    w.set_i32_array(p + "attention.compress_ratios", ratios);
    w.set_f32(p + "attention.compress_rope_freq_base", 160000.0f);
    w.set_u32(p + "hyper_connection.count", m.hc);
    w.set_u32(p + "hyper_connection.sinkhorn_iterations", 20);
    w.set_f32(p + "hyper_connection.epsilon", 1e-6f);
    w.set_u32(p + "hash_layer_count", m.hash_layers);
    w.set_u32(p + "embedding_length_out", m.hc * m.embd);
    if (m.edit_keys) m.edit_keys(w);

    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto add = [&](const std::string& name, std::vector<uint64_t> ne, const std::function<float()>& value) {
        if (name == m.drop_tensor) return;
        uint64_t count = 1;
        for (uint64_t d : ne) count *= d;
        std::vector<float> v(count);
        for (float& x : v) x = value();
        std::vector<uint8_t> bytes(count * sizeof(float));
        std::memcpy(bytes.data(), v.data(), bytes.size());
        (void)w.add_tensor(name, TensorType::F32, ne, std::move(bytes));
    };
    const auto matrix = [&](const std::string& name, uint64_t in, std::vector<uint64_t> ne) {
        const float s = 1.0f / std::sqrt(static_cast<float>(in));
        add(name, std::move(ne), [&] { return normal(rng) * s; });
    };
    const auto gamma = [&](const std::string& name, uint64_t n) { add(name, {n}, [&] { return 1.0f + 0.1f * normal(rng); }); };
    const auto vec = [&](const std::string& name, std::vector<uint64_t> ne) { add(name, std::move(ne), [&] { return 0.5f * normal(rng); }); };

    const uint64_t e = m.embd, wide = uint64_t{m.hc} * m.embd, mixes = (2ull + m.hc) * m.hc, hd = m.head_dim;
    matrix("token_embd.weight", 1, {e, m.vocab});
    gamma("output_norm.weight", e);
    matrix("output.weight", e, {e, m.vocab});
    matrix("output_hc_fn.weight", wide, {wide, m.hc});
    vec("output_hc_base.weight", {m.hc});
    vec("output_hc_scale.weight", {1});
    for (uint32_t il = 0; il < blocks; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        for (const char* site : {"hc_attn_", "hc_ffn_"}) {
            matrix(b + site + "fn.weight", wide, {wide, mixes});
            vec(b + site + "base.weight", {mixes});
            vec(b + site + "scale.weight", {3});
        }
        gamma(b + "attn_norm.weight", e);
        matrix(b + "attn_q_a.weight", e, {e, m.q_lora});
        gamma(b + "attn_q_a_norm.weight", m.q_lora);
        matrix(b + "attn_q_b.weight", m.q_lora, {m.q_lora, m.heads * hd});
        matrix(b + "attn_kv.weight", e, {e, hd});
        gamma(b + "attn_kv_a_norm.weight", hd);
        matrix(b + "attn_output_a.weight", m.heads * hd / m.groups, {m.heads * hd / m.groups, uint64_t{m.groups} * m.lora});
        matrix(b + "attn_output_b.weight", uint64_t{m.groups} * m.lora, {uint64_t{m.groups} * m.lora, e});
        vec(b + "attn_sinks.weight", {m.heads});
        const int32_t ratio = il < ratios.size() ? ratios[il] : 0;
        if (ratio > 0) {
            const uint64_t width = ratio == 4 ? 2 * hd : hd;
            matrix(b + "attn_compressor_kv.weight", e, {e, width});
            matrix(b + "attn_compressor_gate.weight", e, {e, width});
            vec(b + "attn_compressor_ape.weight", {width, static_cast<uint64_t>(ratio)});
            gamma(b + "attn_compressor_norm.weight", hd);
        }
        if (ratio == 4) {
            const uint64_t d = m.index_dim;
            matrix(b + "indexer_compressor_kv.weight", e, {e, 2 * d});
            matrix(b + "indexer_compressor_gate.weight", e, {e, 2 * d});
            vec(b + "indexer_compressor_ape.weight", {2 * d, 4});
            gamma(b + "indexer_compressor_norm.weight", d);
            matrix(b + "indexer.attn_q_b.weight", m.q_lora, {m.q_lora, m.index_heads * d});
            matrix(b + "indexer.proj.weight", e, {e, m.index_heads});
        }
        gamma(b + "ffn_norm.weight", e);
        matrix(b + "ffn_gate_inp.weight", e, {e, m.experts});
        if (il < m.hash_layers) {
            // Distinct experts per token id, as the real table has them.
            std::vector<int32_t> ids;
            std::vector<int32_t> order(m.experts);
            for (uint32_t t = 0; t < m.vocab; ++t) {
                std::iota(order.begin(), order.end(), 0);
                std::shuffle(order.begin(), order.end(), rng);
                ids.insert(ids.end(), order.begin(), order.begin() + m.used);
            }
            if (m.bad_expert_id >= 0 && il == 1) ids[7 * m.used] = m.bad_expert_id;
            const std::string name = b + "ffn_gate_tid2eid.weight";
            if (name != m.drop_tensor) {
                std::vector<uint8_t> bytes(ids.size() * sizeof(int32_t));
                std::memcpy(bytes.data(), ids.data(), bytes.size());
                (void)w.add_tensor(name, TensorType::I32, {m.used, m.vocab}, std::move(bytes));
            }
        } else {
            vec(b + "exp_probs_b.bias", {m.experts});
        }
        matrix(b + "ffn_gate_exps.weight", e, {e, m.ff, m.experts});
        matrix(b + "ffn_up_exps.weight", e, {e, m.ff, m.experts});
        matrix(b + "ffn_down_exps.weight", m.ff, {m.ff, e, m.experts});
        matrix(b + "ffn_gate_shexp.weight", e, {e, m.ff});
        matrix(b + "ffn_up_shexp.weight", e, {e, m.ff});
        matrix(b + "ffn_down_shexp.weight", m.ff, {m.ff, e});
        if (il >= m.layers) {
            matrix(b + "nextn.eh_proj.weight", 2 * e, {2 * e, e});
            gamma(b + "nextn.enorm.weight", e);
            gamma(b + "nextn.hnorm.weight", e);
        }
    }
    (void)w.write(path);
    return path;
}

}  // namespace strata::test
