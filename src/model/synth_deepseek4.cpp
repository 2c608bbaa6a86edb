// The plan of the synthetic DeepSeek-V4-Flash. Keys: REAL_GGUFS.md §B2; tensors and shapes: §B3
// (llama.cpp's names, as its converter writes them); types: the mix (§B4).
#include "model/synth_deepseek4.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/synth_metadata.h"
#include "model/synth_vocab.h"

namespace strata {

namespace {

// DeepSeek-V4-Flash's sizes (REAL_GGUFS.md §B2).
constexpr uint64_t kEmbd = 4096, kHc = 4, kHeads = 64, kHeadDim = 512, kRope = 64, kQLora = 1024;
constexpr uint64_t kOGroups = 8, kOLora = 1024, kFf = 2048, kExpertsUsed = 6, kHashLayers = 3, kWindow = 128;
constexpr uint64_t kIndexHeads = 64, kIndexDim = 128, kIndexTopK = 512;
constexpr uint64_t kHcMix = (2 + kHc) * kHc;  // a mixer's pre, post and comb weights: 24


float fan_in(uint64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); }

// Blocks 0-1 slide only; then the overlapped compressor with the indexer (4) and the heavy one (128)
// alternate, as in the published compress_ratios.
uint64_t ratio_of(uint64_t block) { return block < 2 ? 0 : block % 2 == 0 ? 4 : 128; }

struct Tensors {
    std::vector<SynthTensor> list;
    void matrix(const std::string& name, TensorType t, std::vector<uint64_t> ne) {
        list.push_back({name, t, ne, SynthFill::Gaussian, 0.0f, fan_in(ne[0])});
    }
    void router(const std::string& name, TensorType t, std::vector<uint64_t> ne) {
        list.push_back({name, t, ne, SynthFill::Router, 0.0f, fan_in(ne[0])});
    }
    void norm(const std::string& name, uint64_t n) { list.push_back({name, TensorType::F32, {n}, SynthFill::Gaussian, 1.0f, 0.1f}); }
    void f32(const std::string& name, std::vector<uint64_t> ne, float a, float b) {
        list.push_back({name, TensorType::F32, ne, SynthFill::Gaussian, a, b});
    }
    void ids(const std::string& name, std::vector<uint64_t> ne, uint64_t limit) {
        list.push_back({name, TensorType::I32, ne, SynthFill::Indices, 0.0f, static_cast<float>(limit)});
    }
};

// A hyper-connection mixer: fn (the streams' weights, low precision), base and scale (F32).
void hc_mixer(Tensors& t, const std::string& prefix, TensorType type, uint64_t rows, uint64_t scales) {
    t.matrix(prefix + "_fn.weight", type, {kHc * kEmbd, rows});
    t.f32(prefix + "_base.weight", {rows}, 0.0f, 0.1f);
    t.f32(prefix + "_scale.weight", {scales}, 1.0f, 0.05f);
}

void block(Tensors& t, const Deepseek4Mix& m, uint64_t il, uint64_t n_expert, uint64_t n_vocab) {
    const std::string b = fmt::format("blk.{}.", il);
    const uint64_t ratio = ratio_of(il);
    t.norm(b + "attn_norm.weight", kEmbd);
    t.norm(b + "ffn_norm.weight", kEmbd);
    t.f32(b + "attn_sinks.weight", {kHeads}, 0.0f, 1.0f);
    t.matrix(b + "attn_q_a.weight", m.attention, {kEmbd, kQLora});
    t.norm(b + "attn_q_a_norm.weight", kQLora);
    t.matrix(b + "attn_q_b.weight", m.attention, {kQLora, kHeads * kHeadDim});
    t.matrix(b + "attn_kv.weight", m.attention, {kEmbd, kHeadDim});
    t.norm(b + "attn_kv_a_norm.weight", kHeadDim);
    t.matrix(b + "attn_output_a.weight", m.attention, {kHeads * kHeadDim / kOGroups, kOGroups * kOLora});
    t.matrix(b + "attn_output_b.weight", m.attention, {kOGroups * kOLora, kEmbd});
    hc_mixer(t, b + "hc_attn", m.hc, kHcMix, 3);
    hc_mixer(t, b + "hc_ffn", m.hc, kHcMix, 3);
    t.router(b + "ffn_gate_inp.weight", m.router, {kEmbd, n_expert});
    if (il < kHashLayers) t.ids(b + "ffn_gate_tid2eid.weight", {std::min(kExpertsUsed, n_expert), n_vocab}, n_expert);
    else t.f32(b + "exp_probs_b.bias", {n_expert}, 0.0f, 0.01f);
    t.matrix(b + "ffn_gate_exps.weight", m.expert_gate_up, {kEmbd, kFf, n_expert});
    t.matrix(b + "ffn_up_exps.weight", m.expert_gate_up, {kEmbd, kFf, n_expert});
    t.matrix(b + "ffn_down_exps.weight", m.expert_down, {kFf, kEmbd, n_expert});
    t.matrix(b + "ffn_gate_shexp.weight", m.shared_expert, {kEmbd, kFf});
    t.matrix(b + "ffn_up_shexp.weight", m.shared_expert, {kEmbd, kFf});
    t.matrix(b + "ffn_down_shexp.weight", m.shared_expert, {kFf, kEmbd});
    if (ratio != 0) {
        const uint64_t coff = ratio == 4 ? 2 : 1;  // the overlapped compressor keeps two windows
        t.matrix(b + "attn_compressor_kv.weight", m.compressor, {kEmbd, coff * kHeadDim});
        t.matrix(b + "attn_compressor_gate.weight", m.compressor, {kEmbd, coff * kHeadDim});
        t.matrix(b + "attn_compressor_ape.weight", m.compressor, {coff * kHeadDim, ratio});
        t.norm(b + "attn_compressor_norm.weight", kHeadDim);
    }
    if (ratio == 4) {
        t.matrix(b + "indexer.proj.weight", m.indexer, {kEmbd, kIndexHeads});
        t.matrix(b + "indexer.attn_q_b.weight", m.indexer, {kQLora, kIndexHeads * kIndexDim});
        t.matrix(b + "indexer_compressor_kv.weight", m.indexer, {kEmbd, 2 * kIndexDim});
        t.matrix(b + "indexer_compressor_gate.weight", m.indexer, {kEmbd, 2 * kIndexDim});
        t.matrix(b + "indexer_compressor_ape.weight", m.indexer, {2 * kIndexDim, 4});
        t.norm(b + "indexer_compressor_norm.weight", kIndexDim);
    }
}

struct Vocabulary {
    uint32_t n_vocab = 0;
    std::vector<std::pair<std::string, GgufValue>> keys;  // tokenizer.*
};

Result<Vocabulary> vocabulary(const Deepseek4SynthSpec& s, const GgufFile* file) {
    Vocabulary v;
    if (file != nullptr) {
        STRATA_ASSIGN_OR_RETURN(v.n_vocab, copy_tokenizer_keys(*file, v.keys));
        return v;
    }
    if (s.n_vocab < 512 || s.n_vocab > kDeepseek4Vocab) {
        return Status::error("synth deepseek-v4-flash: vocabulary size: expected 512 .. {}, got {} — pass a "
                             "--vocab-size or a tokenizer GGUF with --vocab",
                             kDeepseek4Vocab, s.n_vocab);
    }
    v.n_vocab = s.n_vocab;
    // The published begin/end/padding ids are 0, 1, 2; here the bytes keep ids 0..255 (so any text
    // round-trips) and the three control tokens sit at the end.
    const uint32_t bos = v.n_vocab - 3, eos = v.n_vocab - 2, pad = v.n_vocab - 1;
    const SynthVocab bytes = synth_byte_vocab(v.n_vocab, {{bos, "<｜begin▁of▁sentence｜>"}, {eos, "<｜end▁of▁sentence｜>"}, {pad, "<｜▁pad▁｜>"}});
    std::vector<GgufValue> tokens, types;
    for (const auto& t : bytes.tokens) tokens.push_back(GgufValue::make_string(t));
    for (int32_t t : bytes.token_types) types.push_back(synth_i32(t));
    v.keys.reserve(8);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
    v.keys.emplace_back("tokenizer.ggml.model", GgufValue::make_string("gpt2"));
    v.keys.emplace_back("tokenizer.ggml.pre", GgufValue::make_string("default"));
    v.keys.emplace_back("tokenizer.ggml.tokens", GgufValue::make_array(GgufValueType::STRING, std::move(tokens)));
    v.keys.emplace_back("tokenizer.ggml.token_type", GgufValue::make_array(GgufValueType::I32, std::move(types)));
    v.keys.emplace_back("tokenizer.ggml.merges", GgufValue::make_array(GgufValueType::STRING, {}));
    v.keys.emplace_back("tokenizer.ggml.bos_token_id", synth_u32(bos));
    v.keys.emplace_back("tokenizer.ggml.eos_token_id", synth_u32(eos));
    v.keys.emplace_back("tokenizer.ggml.padding_token_id", synth_u32(pad));
    return v;
}

std::vector<std::pair<std::string, GgufValue>> model_keys(const Deepseek4SynthSpec& s, const Deepseek4Mix& m, uint32_t n_vocab) {
    const std::string a = "deepseek4.";
    std::vector<std::pair<std::string, GgufValue>> k;
    const auto per_block = [&](double x) {
        std::vector<GgufValue> items(s.n_layers, synth_f32(x));
        return GgufValue::make_array(GgufValueType::F32, std::move(items));
    };
    // One ratio per block and one for the MTP block, as the published files carry it (44 for 43).
    std::vector<GgufValue> ratios;
    for (uint64_t il = 0; il <= s.n_layers; ++il) ratios.push_back(synth_i32(il < s.n_layers ? static_cast<int64_t>(ratio_of(il)) : 0));
    k.emplace_back("general.architecture", GgufValue::make_string("deepseek4"));
    k.emplace_back("general.name", GgufValue::make_string(fmt::format("synthetic DeepSeek-V4-Flash ({})", m.name)));
    k.emplace_back("general.description", GgufValue::make_string("random weights at the published shapes and types (strata synth)"));
    k.emplace_back("general.size_label", GgufValue::make_string(fmt::format("{}x8.4B", s.n_expert)));
    k.emplace_back("general.quantization_version", synth_u32(2));
    k.emplace_back("synth.seed", GgufValue::make_uint64(s.seed));
    if (s.router_skew > 0) k.emplace_back("synth.router_skew", synth_f32(s.router_skew));
    k.emplace_back(a + "block_count", synth_u32(s.n_layers));
    k.emplace_back(a + "context_length", synth_u32(1048576));
    k.emplace_back(a + "embedding_length", synth_u32(kEmbd));
    k.emplace_back(a + "attention.head_count", synth_u32(kHeads));
    k.emplace_back(a + "attention.head_count_kv", synth_u32(1));
    k.emplace_back(a + "attention.key_length", synth_u32(kHeadDim));
    k.emplace_back(a + "attention.value_length", synth_u32(kHeadDim));
    k.emplace_back(a + "rope.scaling.type", GgufValue::make_string("yarn"));
    k.emplace_back(a + "rope.scaling.factor", synth_f32(16));
    k.emplace_back(a + "rope.scaling.original_context_length", synth_u32(65536));
    k.emplace_back(a + "rope.scaling.yarn_beta_fast", synth_f32(32));
    k.emplace_back(a + "rope.scaling.yarn_beta_slow", synth_f32(1));
    k.emplace_back(a + "rope.freq_base", synth_f32(10000));
    k.emplace_back(a + "rope.dimension_count", synth_u32(kRope));
    k.emplace_back(a + "vocab_size", synth_u32(n_vocab));
    k.emplace_back(a + "attention.q_lora_rank", synth_u32(kQLora));
    k.emplace_back(a + "attention.sliding_window", synth_u32(kWindow));
    k.emplace_back(a + "attention.layer_norm_rms_epsilon", synth_f32(1e-6));
    k.emplace_back(a + "expert_count", synth_u32(s.n_expert));
    k.emplace_back(a + "expert_used_count", synth_u32(std::min<uint64_t>(kExpertsUsed, s.n_expert)));
    k.emplace_back(a + "expert_shared_count", synth_u32(1));
    k.emplace_back(a + "expert_feed_forward_length", synth_u32(kFf));
    k.emplace_back(a + "expert_weights_scale", synth_f32(1.5));
    k.emplace_back(a + "expert_weights_norm", GgufValue::make_bool(true));
    k.emplace_back(a + "expert_gating_func", synth_u32(4));
    k.emplace_back(a + "swiglu_clamp_exp", per_block(10.0));
    k.emplace_back(a + "swiglu_clamp_shexp", per_block(10.0));
    k.emplace_back(a + "attention.indexer.head_count", synth_u32(kIndexHeads));
    k.emplace_back(a + "attention.indexer.key_length", synth_u32(kIndexDim));
    k.emplace_back(a + "attention.indexer.top_k", synth_u32(kIndexTopK));
    k.emplace_back(a + "attention.output_group_count", synth_u32(kOGroups));
    k.emplace_back(a + "attention.output_lora_rank", synth_u32(kOLora));
    k.emplace_back(a + "attention.compress_ratios", GgufValue::make_array(GgufValueType::I32, std::move(ratios)));
    k.emplace_back(a + "attention.compress_rope_freq_base", synth_f32(160000));
    k.emplace_back(a + "hyper_connection.count", synth_u32(kHc));
    k.emplace_back(a + "hyper_connection.sinkhorn_iterations", synth_u32(20));
    k.emplace_back(a + "hyper_connection.epsilon", synth_f32(1e-6));
    k.emplace_back(a + "hash_layer_count", synth_u32(std::min<uint64_t>(kHashLayers, s.n_layers)));
    k.emplace_back(a + "embedding_length_out", synth_u32(kHc * kEmbd));
    return k;
}

}  // namespace

const std::vector<Deepseek4Mix>& deepseek4_mixes() {
    using T = TensorType;
    static const std::vector<Deepseek4Mix> mixes = {
        {"ds4-q2",
         "antirez ds4 q2 (IQ2XXS-w2Q2K-AProjQ8-SExpQ8-OutQ8): every type read from the file's enforced layout; its tensors "
         "sum to the real file's bytes less its 5.3 MB header",
         T::F16, T::Q8_0, T::Q8_0, T::Q8_0, T::IQ2_XXS, T::Q2_K, T::F16, T::F16, T::F16, T::F16},
        {"ds4-q4",
         "antirez ds4 q4 (Q4KExperts-F16HC-F16Compressor-F16Indexer-Q8Attn-Q8Shared-Q8Out): every type read; its tensors "
         "sum to the real file's bytes less the same header",
         T::F16, T::Q8_0, T::Q8_0, T::Q8_0, T::Q4_K, T::Q4_K, T::F16, T::F16, T::F16, T::F16},
    };
    return mixes;
}

const Deepseek4Mix* find_deepseek4_mix(const std::string& name) {
    for (const Deepseek4Mix& m : deepseek4_mixes()) {
        if (name == m.name) return &m;
    }
    return nullptr;
}

Result<SynthFile> deepseek4_plan(const Deepseek4SynthSpec& spec, const GgufFile* vocab_file) {
    const Deepseek4Mix* mix = find_deepseek4_mix(spec.mix);
    if (mix == nullptr) {
        std::string names;
        for (const auto& m : deepseek4_mixes()) names += std::string(names.empty() ? "" : ", ") + m.name;
        return Status::error("synth deepseek-v4-flash: --mix: expected one of {}, got \"{}\"", names, spec.mix);
    }
    if (spec.n_layers < 4) {
        return Status::error("synth deepseek-v4-flash: --layers: expected at least 4 (two sliding-only blocks, then one "
                             "of each compressor), got {}",
                             spec.n_layers);
    }
    if (spec.n_expert < 2) return Status::error("synth deepseek-v4-flash: --experts: expected at least 2, got {}", spec.n_expert);
    STRATA_ASSIGN_OR_RETURN(Vocabulary vocab, vocabulary(spec, vocab_file));
    SynthFile f;
    f.metadata = model_keys(spec, *mix, vocab.n_vocab);
    for (auto& kv : vocab.keys) f.metadata.push_back(std::move(kv));
    Tensors t;
    t.matrix("token_embd.weight", mix->token_embd, {kEmbd, vocab.n_vocab});
    for (uint64_t il = 0; il < spec.n_layers; ++il) block(t, *mix, il, spec.n_expert, vocab.n_vocab);
    t.norm("output_norm.weight", kEmbd);
    hc_mixer(t, "output_hc", mix->hc, kHc, 1);
    t.matrix("output.weight", mix->output, {kEmbd, vocab.n_vocab});
    f.tensors = std::move(t.list);
    return f;
}

}  // namespace strata
