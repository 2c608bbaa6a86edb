// The plan of the synthetic Qwen3.8-Flash-Next. Shapes and keys: REAL_GGUFS.md §A2 (the real
// UD-Q4_K_XL header), §A3 (its 1224 tensors), §A5 (the MTP file); types: the mix
// (synth_qwen4exp_mixes.cpp).
#include "model/synth_qwen4exp.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "model/ple_constants.h"
#include "model/synth_blocks.h"
#include "model/synth_metadata.h"
#include "model/synth_vocab.h"

namespace strata {

namespace {

// Qwen3.8-Flash-Next's sizes (REAL_GGUFS.md §A2).
constexpr uint64_t kEmbd = 2560, kHc = 4, kWide = kHc * kEmbd, kLowRank = 320;
constexpr uint64_t kHeads = 24, kHeadsKv = 2, kHeadDim = 256, kFf = 640, kExpertsUsed = 10;
constexpr uint64_t kConv = 4, kState = 128, kGroups = 16, kDtRank = 48, kInner = 6144;
constexpr uint64_t kQkv = 2 * kGroups * kState + kInner;  // the DeltaNet conv's channels: q, k, v
constexpr uint64_t kIndexerHeads = 4, kIndexerDim = 128, kIndexerTopK = 2048, kCompressRatio = 4;
constexpr uint64_t kInterval = 4, kPleLayer = 1, kPleRow = 160, kNgram = 3, kHeadsPerNgram = 8, kPleConv = 4;
constexpr uint64_t kPleBase = 20000000;  // ngram_vocab_size_base (NEW_ARCHS.md §A1.1)
constexpr uint64_t kPleSeed = 1234;      // the config's seed: the hash multipliers derive from it

GgufValue u16(uint64_t v) { return GgufValue::make_int(GgufValueType::U16, static_cast<int64_t>(v)); }
GgufValue i32_array(const std::vector<int64_t>& v) {
    std::vector<GgufValue> items;
    for (int64_t x : v) items.push_back(synth_i32(x));
    return GgufValue::make_array(GgufValueType::I32, std::move(items));
}
GgufValue u64_array(const std::vector<uint64_t>& v) {
    std::vector<GgufValue> items;
    for (uint64_t x : v) items.push_back(GgufValue::make_uint64(x));
    return GgufValue::make_array(GgufValueType::U64, std::move(items));
}

bool is_qsa(uint64_t block) { return (block + 1) % kInterval == 0; }

float fan_in(uint64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); }

// The tensors of one file, built in order.
struct Tensors {
    std::vector<SynthTensor> list;
    void matrix(const std::string& name, TensorType t, std::vector<uint64_t> ne, float scale = 1.0f) {
        list.push_back({name, t, ne, SynthFill::Gaussian, 0.0f, scale * fan_in(ne[0])});
    }
    void norm(const std::string& name, uint64_t n) { list.push_back({name, TensorType::F32, {n}, SynthFill::Gaussian, 1.0f, 0.1f}); }
    void f32(const std::string& name, std::vector<uint64_t> ne, SynthFill fill, float a, float b) {
        list.push_back({name, TensorType::F32, ne, fill, a, b});
    }
};

struct Vocabulary {
    uint32_t n_vocab = 0;
    uint32_t eos = 0, image = 0;
    std::vector<std::pair<std::string, GgufValue>> keys;  // tokenizer.*
};

// Without a vocabulary file, the published ids of the end-of-turn and image tokens keep their
// distance from the vocabulary's end (276 and 264 ids before it), as a cut vocabulary's would.
Result<Vocabulary> vocabulary(const Qwen4ExpSynthSpec& s, const GgufFile* file) {
    Vocabulary v;
    if (file != nullptr) {
        STRATA_ASSIGN_OR_RETURN(v.n_vocab, copy_tokenizer_keys(*file, v.keys));
        v.eos = static_cast<uint32_t>(file->get_uint("tokenizer.ggml.eos_token_id", v.n_vocab - 1));
        v.image = v.n_vocab - 1;
        return v;
    }
    if (s.n_vocab < 1024 || s.n_vocab > kQwen4ExpVocab) {
        return Status::error("synth qwen3.8-flash-next: vocabulary size: expected 1024 .. {} (the end-of-turn token sits 276 ids before the end, after the 256 bytes), got {} — pass a "
                             "--vocab-size or a tokenizer GGUF with --vocab",
                             kQwen4ExpVocab, s.n_vocab);
    }
    v.n_vocab = s.n_vocab;
    v.eos = v.n_vocab - (kQwen4ExpVocab - kQwen4ExpEos);
    v.image = v.n_vocab - (kQwen4ExpVocab - kQwen4ExpImageToken);
    const SynthVocab bytes = synth_byte_vocab(v.n_vocab, {{v.eos, "<|im_end|>"}, {v.image, "<|image_pad|>"}});
    std::vector<GgufValue> tokens, types;
    for (const auto& t : bytes.tokens) tokens.push_back(GgufValue::make_string(t));
    for (int32_t t : bytes.token_types) types.push_back(synth_i32(t));
    v.keys.reserve(6);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
    v.keys.emplace_back("tokenizer.ggml.model", GgufValue::make_string("gpt2"));
    v.keys.emplace_back("tokenizer.ggml.pre", GgufValue::make_string("default"));
    v.keys.emplace_back("tokenizer.ggml.tokens", GgufValue::make_array(GgufValueType::STRING, std::move(tokens)));
    v.keys.emplace_back("tokenizer.ggml.token_type", GgufValue::make_array(GgufValueType::I32, std::move(types)));
    v.keys.emplace_back("tokenizer.ggml.merges", GgufValue::make_array(GgufValueType::STRING, {}));
    v.keys.emplace_back("tokenizer.ggml.eos_token_id", synth_u32(v.eos));
    return v;
}

struct Resolved {
    const Qwen4ExpMix* mix = nullptr;
    uint32_t n_expert = 0;
    Vocabulary vocab;
    PleConstants ple;
};

Result<Resolved> resolve(const Qwen4ExpSynthSpec& s, const GgufFile* vocab_file) {
    Resolved r;
    r.mix = find_qwen4exp_mix(s.mix);
    if (r.mix == nullptr) {
        std::string names;
        for (const auto& m : qwen4exp_mixes()) names += std::string(names.empty() ? "" : ", ") + m.name;
        return Status::error("synth qwen3.8-flash-next: --mix: expected one of {}, got \"{}\"", names, s.mix);
    }
    if (s.n_layers < kPleLayer + 1) {
        return Status::error("synth qwen3.8-flash-next: --layers: expected at least {} (block {} holds the PLE), got {}",
                             kPleLayer + 1, kPleLayer, s.n_layers);
    }
    r.n_expert = s.n_expert == 0 ? r.mix->n_expert : s.n_expert;
    if (r.n_expert < 2) return Status::error("synth qwen3.8-flash-next: --experts: expected at least 2, got {}", r.n_expert);
    STRATA_ASSIGN_OR_RETURN(r.vocab, vocabulary(s, vocab_file));
    PleConstantsSpec ple{.vocab = r.vocab.n_vocab, .seed = kPleSeed, .ple_layer_index = 0, .ngram_size = kNgram,
                         .heads_per_ngram = kHeadsPerNgram, .ngram_base = kPleBase};
    if (s.ple_rows != 0) {
        ple.ngram_base = std::min<uint64_t>(kPleBase, ple_base_for_rows(ple, s.ple_rows));
        if (ple.ngram_base < 2) {
            return Status::error("synth qwen3.8-flash-next: --ple-rows: expected at least {} rows (16 primes from 2, "
                                 "rounded up to 128), got {}",
                                 ple_constants({.vocab = r.vocab.n_vocab, .ngram_base = 2}).rows, s.ple_rows);
        }
    }
    r.ple = ple_constants(ple);
    return r;
}

// Every key of REAL_GGUFS.md §A2 with its GGUF type, for `n_blocks` blocks (the MTP file: the
// trunk's + 1, the last an indexed QSA block), the PLE keys only when `with_ple`.
std::vector<std::pair<std::string, GgufValue>> arch_keys(const Resolved& r, uint64_t n_blocks, bool with_ple,
                                                         bool mtp) {
    const std::string p = "qwen4exp.";
    std::vector<std::pair<std::string, GgufValue>> k;
    k.emplace_back(p + "block_count", synth_u32(n_blocks));
    if (mtp) k.emplace_back(p + "nextn_predict_layers", synth_u32(1));
    k.emplace_back(p + "context_length", synth_u32(262144));
    k.emplace_back(p + "embedding_length", synth_u32(kEmbd));
    k.emplace_back(p + "attention.head_count", synth_u32(kHeads));
    k.emplace_back(p + "attention.head_count_kv", synth_u32(kHeadsKv));
    k.emplace_back(p + "attention.key_length", synth_u32(kHeadDim));
    k.emplace_back(p + "attention.value_length", synth_u32(kHeadDim));
    k.emplace_back(p + "attention.layer_norm_rms_epsilon", synth_f32(1e-6));
    k.emplace_back(p + "rope.freq_base", synth_f32(1e7));
    k.emplace_back(p + "rope.dimension_count", synth_u32(64));
    k.emplace_back(p + "rope.dimension_sections", i32_array({11, 11, 10, 0}));
    k.emplace_back(p + "expert_count", synth_u32(r.n_expert));
    k.emplace_back(p + "expert_used_count", synth_u32(std::min<uint64_t>(kExpertsUsed, r.n_expert)));
    k.emplace_back(p + "expert_feed_forward_length", synth_u32(kFf));
    k.emplace_back(p + "expert_shared_feed_forward_length", synth_u32(kFf));
    k.emplace_back(p + "ssm.conv_kernel", synth_u32(kConv));
    k.emplace_back(p + "ssm.state_size", synth_u32(kState));
    k.emplace_back(p + "ssm.group_count", synth_u32(kGroups));
    k.emplace_back(p + "ssm.time_step_rank", synth_u32(kDtRank));
    k.emplace_back(p + "ssm.inner_size", synth_u32(kInner));
    k.emplace_back(p + "full_attention_interval", synth_u32(kInterval));
    k.emplace_back(p + "hyper_connection.count", synth_u32(kHc));
    k.emplace_back(p + "hyper_connection.low_rank", synth_u32(kLowRank));
    k.emplace_back(p + "attention.indexer.head_count", synth_u32(kIndexerHeads));
    k.emplace_back(p + "attention.indexer.key_length", synth_u32(kIndexerDim));
    k.emplace_back(p + "attention.indexer.top_k", synth_u32(kIndexerTopK));
    std::vector<int64_t> ratios;
    for (uint64_t b = 0; b < n_blocks; ++b) ratios.push_back(is_qsa(b) || (mtp && b + 1 == n_blocks) ? kCompressRatio : 0);
    k.emplace_back(p + "attention.compress_ratios", i32_array(ratios));
    if (with_ple) {
        k.emplace_back(p + "ple.layers", i32_array({static_cast<int64_t>(kPleLayer)}));
        k.emplace_back(p + "ple.ngram_size", synth_u32(kNgram));
        k.emplace_back(p + "ple.heads_per_ngram", synth_u32(kHeadsPerNgram));
        k.emplace_back(p + "ple.conv_kernel", synth_u32(kPleConv));
        k.emplace_back(p + "ple.eos_token_id", synth_u32(r.vocab.eos));
        k.emplace_back(p + "ple.image_token_id", synth_u32(r.vocab.image));
    }
    k.emplace_back(p + "embedding_length_per_layer_input", synth_u32(kPleRow));
    if (with_ple) {
        k.emplace_back(p + "ple.layer_multipliers", u64_array(r.ple.multipliers));
        k.emplace_back(p + "ple.head_offsets", u64_array(r.ple.head_offsets));
        k.emplace_back(p + "ple.head_vocab_sizes", u64_array(r.ple.head_sizes));
    }
    return k;
}

void general_keys(const Qwen4ExpSynthSpec& s, const std::string& name, std::vector<std::pair<std::string, GgufValue>>& k) {
    k.emplace_back("general.architecture", GgufValue::make_string("qwen4exp"));
    k.emplace_back("general.name", GgufValue::make_string(name));
    k.emplace_back("general.description",
                   GgufValue::make_string("synthetic model written by strata synth: random weights, the shapes, types "
                                          "and keys of the published Qwen3.8-Flash-Next files (mix " + s.mix + ")"));
}

void synth_keys(const Qwen4ExpSynthSpec& s, std::vector<std::pair<std::string, GgufValue>>& k) {
    k.emplace_back("synth.mix", GgufValue::make_string(s.mix));
    if (s.router_skew > 0) k.emplace_back("synth.router_skew", synth_f32(s.router_skew));
    k.emplace_back("synth.seed", GgufValue::make_uint64(s.seed));
}

// A block's hyper-connection mixers, MoE and shared expert (the 16 tensors every block has).
void hc_and_moe(Tensors& t, const std::string& b, const Resolved& r, const Qwen4ExpMix& m,
                TensorType hc_down, TensorType hc_up, TensorType inject, TensorType gate_up, TensorType down,
                TensorType shared_gate_up, TensorType shared_down) {
    for (const char* site : {"attn", "ffn"}) {
        const std::string h = b + "hc_" + site + "_";
        t.matrix(h + "down.weight", hc_down, {kWide, kLowRank});
        t.matrix(h + "up.weight", hc_up, {kLowRank, kWide});
        t.matrix(h + "inject.weight", inject, {kWide, kHc});
        t.norm(h + "norm.weight", kWide);
    }
    t.list.push_back({b + "ffn_gate_inp.weight", m.router, {kEmbd, r.n_expert}, SynthFill::Router, 0.0f, fan_in(kEmbd)});
    t.list.push_back({b + "ffn_gate_inp_shexp.weight", TensorType::F32, {kEmbd}, SynthFill::Gaussian, 0.0f, fan_in(kEmbd)});
    t.matrix(b + "ffn_gate_exps.weight", gate_up, {kEmbd, kFf, r.n_expert});
    t.matrix(b + "ffn_up_exps.weight", gate_up, {kEmbd, kFf, r.n_expert});
    t.matrix(b + "ffn_down_exps.weight", down, {kFf, kEmbd, r.n_expert});
    t.matrix(b + "ffn_gate_shexp.weight", shared_gate_up, {kEmbd, kFf});
    t.matrix(b + "ffn_up_shexp.weight", shared_gate_up, {kEmbd, kFf});
    t.matrix(b + "ffn_down_shexp.weight", shared_down, {kFf, kEmbd});
}

// A QSA block's attention and indexer (10 tensors).
void qsa(Tensors& t, const std::string& b, TensorType qk_out, TensorType v, TensorType indexer) {
    t.matrix(b + "attn_q.weight", qk_out, {kEmbd, 2 * kHeads * kHeadDim});
    t.matrix(b + "attn_k.weight", qk_out, {kEmbd, kHeadsKv * kHeadDim});
    t.matrix(b + "attn_v.weight", v, {kEmbd, kHeadsKv * kHeadDim});
    t.matrix(b + "attn_output.weight", qk_out, {kHeads * kHeadDim, kEmbd}, 0.3f);
    t.norm(b + "attn_q_norm.weight", kHeadDim);
    t.norm(b + "attn_k_norm.weight", kHeadDim);
    t.matrix(b + "indexer.q_proj.weight", indexer, {kEmbd, kIndexerHeads * kIndexerDim});
    t.matrix(b + "indexer.k_proj.weight", indexer, {kEmbd, kIndexerDim});
    t.norm(b + "indexer.q_norm.weight", kIndexerDim);
    t.norm(b + "indexer.k_norm.weight", kIndexerDim);
}

// A DeltaNet block's mixer (9 tensors). ssm_a holds −exp(A_log), A_log = log U(1, 16).
void gdn(Tensors& t, const std::string& b, TensorType m) {
    t.matrix(b + "attn_qkv.weight", m, {kEmbd, kQkv});
    t.matrix(b + "attn_gate.weight", m, {kEmbd, kInner});
    t.matrix(b + "ssm_out.weight", m, {kInner, kEmbd});
    t.f32(b + "ssm_alpha.weight", {kEmbd, kDtRank}, SynthFill::Gaussian, 0.0f, fan_in(kEmbd));
    t.f32(b + "ssm_beta.weight", {kEmbd, kDtRank}, SynthFill::Gaussian, 0.0f, fan_in(kEmbd));
    t.f32(b + "ssm_conv1d.weight", {kConv, kQkv}, SynthFill::Gaussian, 0.0f, 0.5f);
    t.f32(b + "ssm_dt.bias", {kDtRank}, SynthFill::Gaussian, 0.0f, 0.5f);
    t.f32(b + "ssm_a", {kDtRank}, SynthFill::Uniform, -16.0f, -1.0f);
    t.norm(b + "ssm_norm.weight", kState);
}

Status check_types(const std::vector<SynthTensor>& tensors, const std::string& mix) {
    for (const SynthTensor& t : tensors) {
        const TensorTypeInfo* info = tensor_type_info(t.type);
        if (!synth_can_write(t.type) || !info->row_fits(t.ne[0])) {
            return Status::error("synth qwen3.8-flash-next: mix {}: tensor {} cannot be {} (rows of {}) — a bug in the "
                                 "mix table",
                                 mix, t.name, tensor_type_name(t.type), t.ne[0]);
        }
    }
    return Status::ok();
}

void split_keys(SynthFile& f, uint64_t no, uint64_t count, uint64_t tensors) {
    f.metadata.emplace_back("split.no", u16(no));
    f.metadata.emplace_back("split.count", u16(count));
    f.metadata.emplace_back("split.tensors.count", synth_i32(static_cast<int64_t>(tensors)));
}

}  // namespace

Result<std::vector<SynthFile>> qwen4exp_trunk_plan(const Qwen4ExpSynthSpec& s, const GgufFile* vocab_file) {
    STRATA_ASSIGN_OR_RETURN(Resolved r, resolve(s, vocab_file));
    const Qwen4ExpMix& m = *r.mix;
    Tensors t;
    t.list.push_back({"token_embd.weight", m.token_embd, {kEmbd, r.vocab.n_vocab}, SynthFill::Gaussian, 0.0f, 1.0f});
    for (uint32_t il = 0; il < s.n_layers; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        hc_and_moe(t, b, r, m, m.hc_matrix, m.hc_matrix, TensorType::F32, m.gate_up_at(il), m.down_at(il),
                   m.shared_gate_up, m.shared_down);
        if (is_qsa(il)) {
            qsa(t, b, m.attention, m.attention, m.indexer);
        } else {
            gdn(t, b, m.gdn);
        }
        if (il == kPleLayer) {
            t.matrix(b + "ple_key.weight", m.ple_key, {kHeadsPerNgram * (kNgram - 1) * kPleRow, kWide});
            t.matrix(b + "ple_value.weight", m.ple_value, {kHeadsPerNgram * (kNgram - 1) * kPleRow, kEmbd});
            t.f32(b + "ple_conv1d.weight", {kPleConv, kWide}, SynthFill::Gaussian, 0.0f, 0.5f);
            t.norm(b + "ple_norm_key.weight", kWide);
            t.norm(b + "ple_norm_query.weight", kWide);
            t.norm(b + "ple_norm_conv.weight", kWide);
        }
    }
    t.norm("output_hc_norm.weight", kWide);
    t.matrix("output_hc_down.weight", m.output_hc, {kWide, kLowRank});
    t.matrix("output_hc_up.weight", m.output_hc, {kLowRank, kWide});
    t.matrix("output.weight", m.output, {kEmbd, r.vocab.n_vocab});
    STRATA_TRY(check_types(t.list, m.name));

    SynthFile table;
    table.tensors.push_back(
        {"per_layer_token_embd.weight", m.ple_table, {kPleRow, r.ple.rows}, SynthFill::Gaussian, 0.0f, 1.0f});
    STRATA_TRY(check_types(table.tensors, m.name));

    const uint64_t n_tensors = t.list.size() + 1;
    SynthFile trunk;
    general_keys(s, "Qwen3.8-Flash-Next (synthetic, " + s.mix + ")", trunk.metadata);
    for (auto& kv : arch_keys(r, s.n_layers, true, false)) trunk.metadata.push_back(std::move(kv));
    for (auto& kv : r.vocab.keys) trunk.metadata.push_back(std::move(kv));
    synth_keys(s, trunk.metadata);
    // gguf-split: the first part keeps every key and adds split.*; the others hold split.* only.
    split_keys(trunk, 0, 2, n_tensors);
    split_keys(table, 1, 2, n_tensors);
    trunk.tensors = std::move(t.list);
    return std::vector<SynthFile>{std::move(trunk), std::move(table)};
}

Result<SynthFile> qwen4exp_mtp_plan(const Qwen4ExpSynthSpec& s, const GgufFile* vocab_file, bool own_embeddings) {
    STRATA_ASSIGN_OR_RETURN(Resolved r, resolve(s, vocab_file));
    // The published MTP file's types (REAL_GGUFS.md §A5, unsloth's Q4_K_M), whatever the trunk's
    // mix: every pack ships the same sidecar. hc_*_up rows are 320 wide, so Q5_0 instead of a K-quant.
    using T = TensorType;
    Tensors t;
    if (own_embeddings) t.list.push_back({"token_embd.weight", T::Q4_K, {kEmbd, r.vocab.n_vocab}, SynthFill::Gaussian, 0.0f, 1.0f});
    const uint32_t il = s.n_layers;
    const std::string b = "blk." + std::to_string(il) + ".";
    qsa(t, b, T::Q4_K, T::Q6_K, T::BF16);
    hc_and_moe(t, b, r, *r.mix, T::Q4_K, T::Q5_0, T::Q4_K, T::Q4_K, T::Q8_0, T::Q4_K, T::Q8_0);
    // The two sites differ: hc_ffn_down is Q6_K in the real file.
    for (SynthTensor& x : t.list) {
        if (x.name == b + "hc_ffn_down.weight") x.type = T::Q6_K;
        if (x.name == b + "ffn_gate_inp.weight") x.type = T::F32;
    }
    t.matrix("nextn.eh_proj.weight", T::Q4_K, {2 * kEmbd, kEmbd});
    t.norm("nextn.enorm.weight", kEmbd);
    t.norm("nextn.hnorm.weight", kWide);
    t.matrix("nextn.hc_head_down.weight", T::Q4_K, {kWide, kLowRank});
    t.norm("nextn.hc_head_norm.weight", kWide);
    t.matrix("nextn.hc_head_up.weight", T::Q5_0, {kLowRank, kWide});
    if (own_embeddings) t.matrix("output.weight", T::Q6_K, {kEmbd, r.vocab.n_vocab});
    STRATA_TRY(check_types(t.list, "mtp"));

    SynthFile f;
    general_keys(s, "Qwen3.8-Flash-Next MTP (synthetic)", f.metadata);
    for (auto& kv : arch_keys(r, s.n_layers + 1, false, true)) f.metadata.push_back(std::move(kv));
    for (auto& kv : r.vocab.keys) f.metadata.push_back(std::move(kv));
    synth_keys(s, f.metadata);
    f.tensors = std::move(t.list);
    return f;
}

namespace {
std::string stem_of(const std::string& output) {
    static const std::regex split_name(R"(^(.*)-\d{5}-of-\d{5}\.gguf$)");
    std::smatch match;
    if (std::regex_match(output, match, split_name)) return match[1].str();
    if (output.size() > 5 && output.compare(output.size() - 5, 5, ".gguf") == 0) return output.substr(0, output.size() - 5);
    return output;
}
}  // namespace

std::vector<std::string> qwen4exp_shard_paths(const std::string& output, size_t n_shards) {
    std::vector<std::string> paths;
    const std::string stem = stem_of(output);
    for (size_t i = 1; i <= n_shards; ++i) {
        paths.push_back(stem + fmt::format("-{:05d}-of-{:05d}.gguf", i, n_shards));
    }
    return paths;
}

std::string qwen4exp_mtp_path(const std::string& output) { return stem_of(output) + "-mtp.gguf"; }

}  // namespace strata
