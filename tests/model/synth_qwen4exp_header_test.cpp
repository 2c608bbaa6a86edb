// The synthetic Qwen3.8-Flash-Next (`strata synth --preset qwen3.8-flash-next`) against the
// published files' headers, without writing them: its plan (every file's keys and tensors) is
// compared with tables transcribed from ../shared/docs/REAL_GGUFS.md, the project's outside
// reference for the real files: §A2 (the trunk's metadata keys, values and GGUF types, read from
// the real unsloth UD-Q4_K_XL header), §A3 (its 1224 tensors: names, ggml shapes, types, and the
// type census and byte sums derived from them) and §A5 (the 34-tensor MTP file). The tables below
// are written from the document's text, not from the synth code, so that a change on either side
// shows here. Where the synthetic file differs on purpose (two shards instead of four), the test
// says so.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gguf/tensor_type.h"
#include "model/ple_constants.h"
#include "model/synth_qwen4exp.h"

namespace strata {
namespace {

using T = TensorType;

struct Expected {
    std::vector<uint64_t> ne;
    TensorType type;
};
using Table = std::map<std::string, Expected>;

// REAL_GGUFS.md §A3, UD-Q4_K_XL column, built from its four tables (non-block 6, every block 16,
// GDN blocks +9, QSA blocks +10, blk.1 PLE +6).
Table ud_q4_k_xl_trunk() {
    Table t;
    t["token_embd.weight"] = {{2560, 248320}, T::Q8_0};
    t["output.weight"] = {{2560, 248320}, T::Q8_0};
    t["output_hc_norm.weight"] = {{10240}, T::F32};
    t["output_hc_down.weight"] = {{10240, 320}, T::Q8_0};
    t["output_hc_up.weight"] = {{320, 10240}, T::Q8_0};
    t["per_layer_token_embd.weight"] = {{160, 320001536}, T::IQ4_NL};
    for (int n = 0; n < 48; ++n) {
        const std::string b = "blk." + std::to_string(n) + ".";
        const bool bumped_down = n == 2 || n == 4 || n == 30 || n == 46 || n == 47;
        t[b + "ffn_gate_exps.weight"] = {{2560, 640, 512}, n == 2 ? T::Q5_K : T::Q4_K};
        t[b + "ffn_up_exps.weight"] = {{2560, 640, 512}, n == 2 ? T::Q5_K : T::Q4_K};
        t[b + "ffn_down_exps.weight"] = {{640, 2560, 512}, bumped_down ? T::Q8_0 : T::Q5_1};
        t[b + "ffn_gate_inp.weight"] = {{2560, 512}, T::F32};
        t[b + "ffn_gate_inp_shexp.weight"] = {{2560}, T::F32};
        t[b + "ffn_gate_shexp.weight"] = {{2560, 640}, T::Q8_0};
        t[b + "ffn_up_shexp.weight"] = {{2560, 640}, T::Q8_0};
        t[b + "ffn_down_shexp.weight"] = {{640, 2560}, T::Q8_0};
        for (const char* site : {"attn", "ffn"}) {
            const std::string h = b + "hc_" + site + "_";
            t[h + "down.weight"] = {{10240, 320}, T::Q8_0};
            t[h + "up.weight"] = {{320, 10240}, T::Q8_0};
            t[h + "inject.weight"] = {{10240, 4}, T::F32};
            t[h + "norm.weight"] = {{10240}, T::F32};
        }
        if ((n + 1) % 4 != 0) {  // GDN
            t[b + "attn_qkv.weight"] = {{2560, 10240}, T::Q8_0};
            t[b + "attn_gate.weight"] = {{2560, 6144}, T::Q8_0};
            t[b + "ssm_out.weight"] = {{6144, 2560}, T::Q8_0};
            t[b + "ssm_alpha.weight"] = {{2560, 48}, T::F32};
            t[b + "ssm_beta.weight"] = {{2560, 48}, T::F32};
            t[b + "ssm_conv1d.weight"] = {{4, 10240}, T::F32};
            t[b + "ssm_dt.bias"] = {{48}, T::F32};
            t[b + "ssm_a"] = {{48}, T::F32};
            t[b + "ssm_norm.weight"] = {{128}, T::F32};
        } else {  // QSA
            t[b + "attn_q.weight"] = {{2560, 12288}, T::Q8_0};
            t[b + "attn_k.weight"] = {{2560, 512}, T::Q8_0};
            t[b + "attn_v.weight"] = {{2560, 512}, T::Q8_0};
            t[b + "attn_output.weight"] = {{6144, 2560}, T::Q8_0};
            t[b + "attn_q_norm.weight"] = {{256}, T::F32};
            t[b + "attn_k_norm.weight"] = {{256}, T::F32};
            t[b + "indexer.q_proj.weight"] = {{2560, 512}, T::BF16};
            t[b + "indexer.k_proj.weight"] = {{2560, 128}, T::BF16};
            t[b + "indexer.q_norm.weight"] = {{128}, T::F32};
            t[b + "indexer.k_norm.weight"] = {{128}, T::F32};
        }
        if (n == 1) {
            t[b + "ple_key.weight"] = {{2560, 10240}, T::Q8_0};
            t[b + "ple_value.weight"] = {{2560, 2560}, T::Q8_0};
            t[b + "ple_conv1d.weight"] = {{4, 10240}, T::F32};
            t[b + "ple_norm_key.weight"] = {{10240}, T::F32};
            t[b + "ple_norm_query.weight"] = {{10240}, T::F32};
            t[b + "ple_norm_conv.weight"] = {{10240}, T::F32};
        }
    }
    return t;
}

// REAL_GGUFS.md §A5: the unsloth MTP Q4_K_M file. blk.48's shapes are a trunk QSA block's (§A3).
Table mtp_q4_k_m() {
    Table t;
    t["token_embd.weight"] = {{2560, 248320}, T::Q4_K};
    t["output.weight"] = {{2560, 248320}, T::Q6_K};
    const std::string b = "blk.48.";
    t[b + "attn_q.weight"] = {{2560, 12288}, T::Q4_K};
    t[b + "attn_k.weight"] = {{2560, 512}, T::Q4_K};
    t[b + "attn_v.weight"] = {{2560, 512}, T::Q6_K};
    t[b + "attn_output.weight"] = {{6144, 2560}, T::Q4_K};
    t[b + "attn_q_norm.weight"] = {{256}, T::F32};
    t[b + "attn_k_norm.weight"] = {{256}, T::F32};
    t[b + "indexer.q_proj.weight"] = {{2560, 512}, T::BF16};
    t[b + "indexer.k_proj.weight"] = {{2560, 128}, T::BF16};
    t[b + "indexer.q_norm.weight"] = {{128}, T::F32};
    t[b + "indexer.k_norm.weight"] = {{128}, T::F32};
    t[b + "ffn_gate_exps.weight"] = {{2560, 640, 512}, T::Q4_K};
    t[b + "ffn_up_exps.weight"] = {{2560, 640, 512}, T::Q4_K};
    t[b + "ffn_down_exps.weight"] = {{640, 2560, 512}, T::Q8_0};
    t[b + "ffn_gate_shexp.weight"] = {{2560, 640}, T::Q4_K};
    t[b + "ffn_up_shexp.weight"] = {{2560, 640}, T::Q4_K};
    t[b + "ffn_down_shexp.weight"] = {{640, 2560}, T::Q8_0};
    t[b + "ffn_gate_inp.weight"] = {{2560, 512}, T::F32};
    t[b + "ffn_gate_inp_shexp.weight"] = {{2560}, T::F32};
    t[b + "hc_attn_down.weight"] = {{10240, 320}, T::Q4_K};
    t[b + "hc_ffn_down.weight"] = {{10240, 320}, T::Q6_K};
    t[b + "hc_attn_up.weight"] = {{320, 10240}, T::Q5_0};
    t[b + "hc_ffn_up.weight"] = {{320, 10240}, T::Q5_0};
    t[b + "hc_attn_inject.weight"] = {{10240, 4}, T::Q4_K};
    t[b + "hc_ffn_inject.weight"] = {{10240, 4}, T::Q4_K};
    t[b + "hc_attn_norm.weight"] = {{10240}, T::F32};
    t[b + "hc_ffn_norm.weight"] = {{10240}, T::F32};
    t["nextn.eh_proj.weight"] = {{5120, 2560}, T::Q4_K};
    t["nextn.enorm.weight"] = {{2560}, T::F32};
    t["nextn.hnorm.weight"] = {{10240}, T::F32};
    t["nextn.hc_head_down.weight"] = {{10240, 320}, T::Q4_K};
    t["nextn.hc_head_norm.weight"] = {{10240}, T::F32};
    t["nextn.hc_head_up.weight"] = {{320, 10240}, T::Q5_0};
    return t;
}

// A key's GGUF type and value as text (arrays: their element type and items).
struct Key {
    GgufValueType type;
    std::string value;
};

std::string value_text(const GgufValue& v) {
    if (!v.is_array()) return v.to_display_string();
    std::string s = std::string(gguf_value_type_name(v.as_array().element_type)) + "[";
    for (size_t i = 0; i < v.as_array().items.size(); ++i) s += (i ? "," : "") + v.as_array().items[i].to_display_string();
    return s + "]";
}

std::string ratios(int blocks, bool mtp_last) {
    std::string s = "i32[";
    for (int n = 0; n < blocks; ++n) {
        const bool indexed = (n + 1) % 4 == 0 || (mtp_last && n == blocks - 1);
        s += std::string(n ? "," : "") + (indexed ? "4" : "0");
    }
    return s + "]";
}

// REAL_GGUFS.md §A2: every qwen4exp.* key of the real trunk file, its type and value.
std::map<std::string, Key> trunk_keys() {
    using V = GgufValueType;
    const std::string p = "qwen4exp.";
    std::map<std::string, Key> k;
    k[p + "block_count"] = {V::U32, "48"};
    k[p + "context_length"] = {V::U32, "262144"};
    k[p + "embedding_length"] = {V::U32, "2560"};
    k[p + "attention.head_count"] = {V::U32, "24"};
    k[p + "attention.head_count_kv"] = {V::U32, "2"};
    k[p + "attention.key_length"] = {V::U32, "256"};
    k[p + "attention.value_length"] = {V::U32, "256"};
    k[p + "attention.layer_norm_rms_epsilon"] = {V::F32, GgufValue::make_float(V::F32, 1e-6).to_display_string()};
    k[p + "rope.freq_base"] = {V::F32, GgufValue::make_float(V::F32, 1e7).to_display_string()};
    k[p + "rope.dimension_count"] = {V::U32, "64"};
    k[p + "rope.dimension_sections"] = {V::ARRAY, "i32[11,11,10,0]"};
    k[p + "expert_count"] = {V::U32, "512"};
    k[p + "expert_used_count"] = {V::U32, "10"};
    k[p + "expert_feed_forward_length"] = {V::U32, "640"};
    k[p + "expert_shared_feed_forward_length"] = {V::U32, "640"};
    k[p + "ssm.conv_kernel"] = {V::U32, "4"};
    k[p + "ssm.state_size"] = {V::U32, "128"};
    k[p + "ssm.group_count"] = {V::U32, "16"};
    k[p + "ssm.time_step_rank"] = {V::U32, "48"};
    k[p + "ssm.inner_size"] = {V::U32, "6144"};
    k[p + "full_attention_interval"] = {V::U32, "4"};
    k[p + "hyper_connection.count"] = {V::U32, "4"};
    k[p + "hyper_connection.low_rank"] = {V::U32, "320"};
    k[p + "attention.indexer.head_count"] = {V::U32, "4"};
    k[p + "attention.indexer.key_length"] = {V::U32, "128"};
    k[p + "attention.indexer.top_k"] = {V::U32, "2048"};
    k[p + "attention.compress_ratios"] = {V::ARRAY, ratios(48, false)};
    k[p + "ple.layers"] = {V::ARRAY, "i32[1]"};
    k[p + "ple.ngram_size"] = {V::U32, "3"};
    k[p + "ple.heads_per_ngram"] = {V::U32, "8"};
    k[p + "ple.conv_kernel"] = {V::U32, "4"};
    k[p + "ple.eos_token_id"] = {V::U32, "248044"};
    k[p + "ple.image_token_id"] = {V::U32, "248056"};
    k[p + "embedding_length_per_layer_input"] = {V::U32, "160"};
    k[p + "ple.layer_multipliers"] = {V::ARRAY, "u64[23703573157769,20109073645365,8052911324071]"};
    k[p + "ple.head_offsets"] = {V::ARRAY,
                                 "u64[0,20000003,40000026,60000059,80000106,100000165,120000228,140000297,160000374,"
                                 "180000455,200000548,220000655,240000802,260000955,280001114,300001275]"};
    k[p + "ple.head_vocab_sizes"] = {V::ARRAY,
                                     "u64[20000003,20000023,20000033,20000047,20000059,20000063,20000069,20000077,"
                                     "20000081,20000093,20000107,20000147,20000153,20000159,20000161,20000171]"};
    return k;
}

std::map<std::string, Key> actual_keys(const SynthFile& f, const std::string& prefix) {
    std::map<std::string, Key> k;
    for (const auto& [key, v] : f.metadata) {
        if (key.rfind(prefix, 0) == 0) k[key] = {v.type, value_text(v)};
    }
    return k;
}

void expect_same_keys(const std::map<std::string, Key>& expected, const std::map<std::string, Key>& actual) {
    for (const auto& [key, e] : expected) {
        auto it = actual.find(key);
        if (it == actual.end()) {
            ADD_FAILURE() << "missing key " << key;
            continue;
        }
        EXPECT_EQ(gguf_value_type_name(it->second.type), gguf_value_type_name(e.type)) << key;
        EXPECT_EQ(it->second.value, e.value) << key;
    }
    for (const auto& [key, a] : actual) EXPECT_TRUE(expected.count(key)) << "key not in the real file: " << key;
}

void expect_same_tensors(const Table& expected, const std::vector<const SynthTensor*>& actual) {
    std::map<std::string, const SynthTensor*> by_name;
    for (const SynthTensor* t : actual) EXPECT_TRUE(by_name.emplace(t->name, t).second) << "twice: " << t->name;
    for (const auto& [name, e] : expected) {
        auto it = by_name.find(name);
        if (it == by_name.end()) {
            ADD_FAILURE() << "missing tensor " << name;
            continue;
        }
        EXPECT_EQ(it->second->ne, e.ne) << name;
        EXPECT_EQ(tensor_type_name(it->second->type), std::string(tensor_type_name(e.type))) << name;
    }
    for (const auto& [name, t] : by_name) EXPECT_TRUE(expected.count(name)) << "tensor not in the real file: " << name;
}

// A mix's plan; a smaller vocabulary (token_embd and output rows) where the test does not look at it.
std::vector<SynthFile> trunk(const std::string& mix, uint32_t n_vocab = 248320) {
    Qwen4ExpSynthSpec spec;
    spec.mix = mix;
    spec.n_vocab = n_vocab;
    auto files = qwen4exp_trunk_plan(spec, nullptr);
    EXPECT_TRUE(files) << files.status().message();
    return files ? std::move(*files) : std::vector<SynthFile>{};
}

std::vector<const SynthTensor*> all_tensors(const std::vector<SynthFile>& files) {
    std::vector<const SynthTensor*> v;
    for (const SynthFile& f : files) {
        for (const SynthTensor& t : f.tensors) v.push_back(&t);
    }
    return v;
}

TEST(SynthQwen4ExpHeader, TheUdQ4KXlTrunkHasTheRealTensors) {
    const auto files = trunk("ud-q4_k_xl");
    ASSERT_EQ(files.size(), 2u);
    const Table expected = ud_q4_k_xl_trunk();
    EXPECT_EQ(expected.size(), 1224u);  // §A3's count, = split.tensors.count of the real file
    expect_same_tensors(expected, all_tensors(files));
}

// §A3's census and byte sums, tallied from the real type table: a second check of the same facts.
TEST(SynthQwen4ExpHeader, TheUdQ4KXlCensusAndBytesAreTheRealOnes) {
    const auto files = trunk("ud-q4_k_xl");
    std::map<std::string, int> census;
    uint64_t bytes = 0, routed = 0;
    for (const SynthTensor* t : all_tensors(files)) {
        ++census[std::string(tensor_type_name(t->type))];
        bytes += t->bytes();
        if (t->name.find("_exps.") != std::string::npos) routed += t->bytes();
    }
    const std::map<std::string, int> real = {{"F32", 557}, {"Q8_0", 503}, {"Q4_K", 94}, {"Q5_1", 43},
                                             {"BF16", 24}, {"Q5_K", 2},   {"IQ4_NL", 1}};
    EXPECT_EQ(census, real);
    EXPECT_EQ(bytes, 111323630080ull);
    EXPECT_EQ(routed, 77017907200ull);
    // §A1: the table is 28,800,138,240 bytes at IQ4_NL.
    EXPECT_EQ(files[1].tensor_bytes(), 28800138240ull);
}

TEST(SynthQwen4ExpHeader, TheTrunkHasEveryRealKeyWithItsType) {
    const auto files = trunk("ud-q4_k_xl");
    ASSERT_EQ(files.size(), 2u);
    expect_same_keys(trunk_keys(), actual_keys(files[0], "qwen4exp."));
    // §A2: no nextn_predict_layers and no vocab_size in the trunk (in the map check too).
    EXPECT_EQ(files[0].find("qwen4exp.nextn_predict_layers"), nullptr);
    EXPECT_EQ(files[0].find("qwen4exp.vocab_size"), nullptr);
}

// §A2's split.* types and tensor count; §A1: the second shard holds only the table. The real
// UD-Q4_K_XL has 4 shards (its shard 1 metadata only); synth writes the 2-shard layout of the
// GSQ-RCO packs, so split.count is 2 here.
TEST(SynthQwen4ExpHeader, TheTableIsAloneInShardTwoWithGgufSplitKeys) {
    const auto files = trunk("ud-q4_k_xl");
    ASSERT_EQ(files.size(), 2u);
    using V = GgufValueType;
    const std::map<std::string, Key> first = {
        {"split.no", {V::U16, "0"}}, {"split.count", {V::U16, "2"}}, {"split.tensors.count", {V::I32, "1224"}}};
    const std::map<std::string, Key> second = {
        {"split.no", {V::U16, "1"}}, {"split.count", {V::U16, "2"}}, {"split.tensors.count", {V::I32, "1224"}}};
    expect_same_keys(first, actual_keys(files[0], "split."));
    expect_same_keys(second, actual_keys(files[1], "split."));
    EXPECT_EQ(files[1].metadata.size(), 3u);  // gguf-split writes only split.* into the later parts
    ASSERT_EQ(files[1].tensors.size(), 1u);
    EXPECT_EQ(files[1].tensors[0].name, "per_layer_token_embd.weight");
}

TEST(SynthQwen4ExpHeader, TheMtpFileHasTheReal34Tensors) {
    Qwen4ExpSynthSpec spec;
    auto mtp = qwen4exp_mtp_plan(spec, nullptr, true);
    ASSERT_TRUE(mtp) << mtp.status().message();
    const Table expected = mtp_q4_k_m();
    EXPECT_EQ(expected.size(), 34u);
    std::vector<const SynthTensor*> v;
    for (const SynthTensor& t : mtp->tensors) v.push_back(&t);
    expect_same_tensors(expected, v);

    // The -shared- variants: the same block without its own embeddings and head (32).
    auto shared = qwen4exp_mtp_plan(spec, nullptr, false);
    ASSERT_TRUE(shared);
    EXPECT_EQ(shared->tensors.size(), 32u);
    EXPECT_EQ(shared->find("qwen4exp.ple.layers"), nullptr);
}

// §A2 (MTP file): the trunk's keys with block_count 49, nextn_predict_layers 1, compress_ratios
// [49] ending in 4, and no ple.* keys.
TEST(SynthQwen4ExpHeader, TheMtpFileHasTheRealKeys) {
    Qwen4ExpSynthSpec spec;
    auto mtp = qwen4exp_mtp_plan(spec, nullptr, true);
    ASSERT_TRUE(mtp) << mtp.status().message();
    std::map<std::string, Key> expected;
    for (const auto& [key, k] : trunk_keys()) {
        if (key.rfind("qwen4exp.ple.", 0) != 0) expected[key] = k;
    }
    expected["qwen4exp.block_count"] = {GgufValueType::U32, "49"};
    expected["qwen4exp.nextn_predict_layers"] = {GgufValueType::U32, "1"};
    expected["qwen4exp.attention.compress_ratios"] = {GgufValueType::ARRAY, ratios(49, true)};
    expect_same_keys(expected, actual_keys(*mtp, "qwen4exp."));
}

// The hash constants derive from the config as HF derives them (NEW_ARCHS.md §A1.7) and give
// §A2's published arrays and the padded row count 320,001,536.
TEST(SynthQwen4ExpHeader, PleConstantsFromTheConfigAreThePublishedOnes) {
    const PleConstants c = ple_constants({.vocab = 248320});
    EXPECT_EQ(c.rows, 320001536u);
    EXPECT_EQ(c.multipliers, (std::vector<uint64_t>{23703573157769ull, 20109073645365ull, 8052911324071ull}));
    EXPECT_EQ(c.head_sizes.front(), 20000003u);
    EXPECT_EQ(c.head_sizes.back(), 20000171u);
    EXPECT_EQ(c.head_offsets.back(), 300001275u);
}

// Every mix is the same 1224-tensor layout; the Coder has 256 experts (§A4).
TEST(SynthQwen4ExpHeader, EveryMixHasTheSameNamesAndShapes) {
    const auto reference_files = trunk("ud-q4_k_xl", 1024);
    const auto reference = all_tensors(reference_files);
    for (const auto& mix : qwen4exp_mixes()) {
        const auto files = trunk(mix.name, 1024);
        const auto tensors = all_tensors(files);
        ASSERT_EQ(tensors.size(), reference.size()) << mix.name;
        for (size_t i = 0; i < tensors.size(); ++i) {
            EXPECT_EQ(tensors[i]->name, reference[i]->name) << mix.name;
            std::vector<uint64_t> ne = reference[i]->ne;
            if (tensors[i]->name.find("_exps.") != std::string::npos) ne[2] = mix.n_expert;
            if (tensors[i]->name.find("ffn_gate_inp.") != std::string::npos) ne[1] = mix.n_expert;
            EXPECT_EQ(tensors[i]->ne, ne) << mix.name << " " << tensors[i]->name;
        }
    }
}

// The facts §A4 gives for the GSQ-RCO packs: routers and the 192 HC matrices BF16, the table
// IQ4_NL, and (Q2_0, from the arena size) every routed expert Q2_0.
TEST(SynthQwen4ExpHeader, GsqRcoMixesKeepTheirKnownTypes) {
    for (const char* name : {"q2_0", "iq2_xs", "iq3_xxs", "iq3_s", "coder-iq1_m"}) {
        int hc_bf16 = 0, router_bf16 = 0;
        const auto files = trunk(name, 1024);
        for (const SynthTensor* t : all_tensors(files)) {
            const bool hc = t->name.find(".hc_") != std::string::npos &&
                            (t->name.find("_up.") != std::string::npos || t->name.find("_down.") != std::string::npos);
            hc_bf16 += hc && t->type == T::BF16;
            router_bf16 += t->name.find("ffn_gate_inp.") != std::string::npos && t->type == T::BF16;
            if (t->name == "per_layer_token_embd.weight") {
                EXPECT_EQ(t->type, T::IQ4_NL) << name;
            }
            if (t->name == "blk.1.ple_value.weight") {
                EXPECT_EQ(t->type, T::BF16) << name;
            }
            if (std::string(name) == "q2_0" && t->name.find("_exps.") != std::string::npos) {
                EXPECT_EQ(t->type, T::Q2_0) << t->name;
            }
        }
        EXPECT_EQ(hc_bf16, 192) << name;
        EXPECT_EQ(router_bf16, 48) << name;
    }
}

}  // namespace
}  // namespace strata
