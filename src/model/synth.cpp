#include "model/synth.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <cmath>
#include <numeric>
#include <random>

#include "gguf/writer.h"
#include "model/synth_blocks.h"
#include "model/synth_vocab.h"

namespace strata {

namespace {

struct TensorPlan {
    std::string name;
    TensorType type;
    std::vector<uint64_t> ne;
    float stddev;        // of the Gaussian values the weights are drawn from
    bool is_norm = false;
    int router_layer = -1;
    float norm_mean = 1.0f;  // norms: the mean of their weights (spread 10% of it)
};

std::vector<TensorPlan> plan_tensors(const SynthSpec& s) {
    const uint64_t e = s.n_embd, q = uint64_t(s.n_head) * s.head_dim, kv = uint64_t(s.n_head_kv) * s.head_dim;
    auto inv_sqrt = [](uint64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
    std::vector<TensorPlan> t;
    t.push_back({"token_embd.weight", s.type_embedding, {e, s.n_vocab}, 1.0f});
    for (uint32_t l = 0; l < s.n_layers; ++l) {
        std::string b = "blk." + std::to_string(l) + ".";
        t.push_back({b + "attn_norm.weight", TensorType::F32, {e}, 0, true});
        t.push_back({b + "attn_q.weight", s.type_attention, {e, q}, inv_sqrt(e)});
        t.push_back({b + "attn_k.weight", s.type_attention, {e, kv}, inv_sqrt(e)});
        t.push_back({b + "attn_v.weight", s.type_attention_v, {e, kv}, inv_sqrt(e)});
        t.push_back({b + "attn_output.weight", s.type_attention, {q, e}, s.attention_output_scale * inv_sqrt(q)});
        t.push_back({b + "attn_q_norm.weight", TensorType::F32, {s.head_dim}, 0, true, -1, s.qk_norm_mean});
        t.push_back({b + "attn_k_norm.weight", TensorType::F32, {s.head_dim}, 0, true, -1, s.qk_norm_mean});
        t.push_back({b + "ffn_norm.weight", TensorType::F32, {e}, 0, true});
        t.push_back({b + "ffn_gate_inp.weight", TensorType::F32, {e, s.n_expert}, inv_sqrt(e), false, int(l)});
        t.push_back({b + "ffn_gate_exps.weight", s.type_expert_gate_up, {e, s.n_ff_expert, s.n_expert}, inv_sqrt(e)});
        t.push_back({b + "ffn_down_exps.weight", s.type_expert_down, {s.n_ff_expert, e, s.n_expert}, inv_sqrt(s.n_ff_expert)});
        t.push_back({b + "ffn_up_exps.weight", s.type_expert_gate_up, {e, s.n_ff_expert, s.n_expert}, inv_sqrt(e)});
    }
    t.push_back({"output_norm.weight", TensorType::F32, {e}, 0, true});
    t.push_back({"output.weight", s.type_output, {e, s.n_vocab}, inv_sqrt(e)});
    return t;
}

void write_metadata(const SynthSpec& s, const GgufFile* vocab, GgufWriter& w) {
    const std::string a = "qwen3moe.";
    w.set_string("general.architecture", "qwen3moe");
    w.set_string("general.name", s.name);
    w.set_string("general.description", "synthetic model written by strata synth: random weights, real shapes");
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
    if (s.router_skew > 0) w.set_f32("synth.router_skew", static_cast<float>(s.router_skew));
    w.set_u64("synth.seed", s.seed);

    if (vocab) {
        for (const auto& e : vocab->metadata()) {
            if (e.key.rfind("tokenizer.", 0) == 0) w.set(e.key, e.value);
        }
        return;
    }
    // The 256 bytes, then placeholder tokens up to the embedding's rows (a vocabulary of any size,
    // for shapes such as one that is not a multiple of 64).
    const SynthVocab bytes = synth_byte_vocab(std::max<uint32_t>(256, s.n_vocab));
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", "default");
    w.set_string_array("tokenizer.ggml.tokens", bytes.tokens);
    w.set_i32_array("tokenizer.ggml.token_type", bytes.token_types);
    w.set_string_array("tokenizer.ggml.merges", {});
}

}  // namespace

std::vector<std::string> synth_preset_names() { return {"tiny", "qwen3-30b-a3b"}; }

Result<SynthSpec> synth_preset(const std::string& name) {
    SynthSpec s;
    s.name = "synth-" + name;
    if (name == "tiny") return s;
    if (name == "qwen3-30b-a3b") {
        // docs/BENCHMARKS.md: shapes and types of a Qwen3-30B-A3B Q4_K_M file.
        s.n_layers = 48; s.n_embd = 2048; s.n_head = 32; s.n_head_kv = 4; s.head_dim = 128;
        s.n_expert = 128; s.n_expert_used = 8; s.n_ff_expert = 768; s.n_ff_dense = 6144;
        s.n_vocab = 32000; s.context_length = 40960;
        s.type_embedding = s.type_attention = s.type_expert_gate_up = TensorType::Q4_K;
        s.type_attention_v = s.type_expert_down = s.type_output = TensorType::Q6_K;
        return s;
    }
    return Status::error("synth preset: expected one of tiny, qwen3-30b-a3b, got \"{}\"", name);
}

Status write_synth_model(const SynthSpec& spec_in, const GgufFile* vocab, const std::string& path,
                         const SynthProgress& progress) {
    SynthSpec spec = spec_in;
    if (vocab) {
        const GgufValue* tokens = vocab->find("tokenizer.ggml.tokens");
        if (!tokens || !tokens->is_array() || tokens->as_array().items.empty()) {
            return Status::error("{}: expected a vocabulary (tokenizer.ggml.tokens), found none", vocab->path());
        }
        spec.n_vocab = static_cast<uint32_t>(tokens->as_array().items.size());
    }
    if (!vocab && spec.n_vocab < 256) {
        return Status::error("synth: expected a vocabulary of at least 256 tokens (the bytes), got {}", spec.n_vocab);
    }
    if (spec.n_expert_used == 0 || spec.n_expert_used > spec.n_expert) {
        return Status::error("synth: expected 1 <= experts used <= {} experts, got {}", spec.n_expert, spec.n_expert_used);
    }
    for (TensorType t : {spec.type_embedding, spec.type_attention, spec.type_attention_v, spec.type_expert_gate_up,
                         spec.type_expert_down, spec.type_output}) {
        if (!synth_can_write(t)) {
            return Status::error("synth: Strata cannot write {} weights (use a type with a quantizer, e.g. Q4_K, Q2_0, "
                                 "NVFP4, or one of the i-quants IQ1_S, IQ2_XXS .. IQ4_XS)",
                                 tensor_type_name(t));
        }
    }

    GgufWriter writer;
    write_metadata(spec, vocab, writer);
    auto plans = plan_tensors(spec);
    uint64_t total = 0;
    for (const auto& p : plans) {
        uint64_t rows = 1;
        for (size_t i = 1; i < p.ne.size(); ++i) rows *= p.ne[i];
        total += tensor_type_info(p.type)->row_bytes(p.ne[0]) * rows;
    }

    auto rng = std::make_shared<std::mt19937_64>(spec.seed);
    auto done = std::make_shared<uint64_t>(0);
    std::vector<std::shared_ptr<SynthBlockPool>> pools;
    for (const auto& p : plans) {
        if (p.is_norm) {
            // Norm weights near their mean with some spread, as trained models have.
            std::vector<float> v(p.ne[0]);
            std::normal_distribution<float> g(p.norm_mean, 0.1f * p.norm_mean);
            for (auto& x : v) x = g(*rng);
            std::vector<uint8_t> bytes(v.size() * 4);
            std::memcpy(bytes.data(), v.data(), bytes.size());
            *done += bytes.size();
            STRATA_TRY(writer.add_tensor(p.name, p.type, p.ne, std::move(bytes)));
            continue;
        }
        if (p.router_layer >= 0) {
            uint64_t rows = p.ne[1], cols = p.ne[0];
            std::vector<float> v(rows * cols);
            std::normal_distribution<float> g(0.0f, p.stddev);
            for (auto& x : v) x = g(*rng);
            if (spec.router_skew > 0) {
                std::vector<uint32_t> rank(rows);
                std::iota(rank.begin(), rank.end(), 0u);
                std::shuffle(rank.begin(), rank.end(), *rng);
                for (uint64_t r = 0; r < rows; ++r) {
                    float scale = static_cast<float>(std::pow(double(rank[r]) + 1.0, -spec.router_skew));
                    for (uint64_t c = 0; c < cols; ++c) v[r * cols + c] *= scale;
                }
            }
            std::vector<uint8_t> bytes(v.size() * 4);
            std::memcpy(bytes.data(), v.data(), bytes.size());
            *done += bytes.size();
            STRATA_TRY(writer.add_tensor(p.name, p.type, p.ne, std::move(bytes)));
            continue;
        }
        auto pool = std::make_shared<SynthBlockPool>(p.type, p.stddev, *rng);
        pools.push_back(pool);
        STRATA_TRY(writer.add_tensor_generator(p.name, p.type, p.ne, [pool, rng, done, total, progress](uint8_t* dst, uint64_t n) {
            pool->fill(dst, n, *rng);
            *done += n;
            if (progress) progress(*done, total);
        }));
    }
    STRATA_TRY(writer.write(path));
    if (progress) progress(total, total);
    return Status::ok();
}

}  // namespace strata
