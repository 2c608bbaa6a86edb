// deepseek4 files the recipe cannot run are refused at load with the name of what is wrong: each
// case is the tiny model (deepseek4_tiny_model.h) with one key or tensor taken away or changed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "support/scratch.h"
#include "deepseek4_tiny_model.h"

namespace strata {
namespace {

// The tiny model with `edit` applied, less the key `drop_key`, loaded: the error, or "" when it loads.
std::string load_edited(const test::TinyDeepseek4& edit, const std::string& drop_key = "") {
    test::ScratchDir dir;
    const std::string written = test::write_tiny_deepseek4(dir.path("ds4.gguf"), edit);
    std::string path = written;
    if (!drop_key.empty()) {
        auto orig = GgufFile::open(written);
        EXPECT_TRUE(orig);
        if (!orig) return "unreadable";
        GgufWriter w;
        for (const auto& e : orig->metadata()) {
            if (e.key != drop_key) w.set(e.key, e.value);
        }
        for (const auto& t : orig->tensors()) {
            const uint8_t* d = orig->tensor_data(t);
            EXPECT_TRUE(w.add_tensor(t.name, t.type, std::vector<uint64_t>(t.ne, t.ne + t.n_dims),
                                     std::vector<uint8_t>(d, d + t.n_bytes)));
        }
        path = dir.path("dropped.gguf");
        EXPECT_TRUE(w.write(path));
    }
    auto f = GgufFile::open(path);
    EXPECT_TRUE(f) << f.status().message();
    if (!f) return "unreadable";
    auto m = Model::load(*f);
    return m ? "" : m.status().message();
}

TEST(Deepseek4Load, TheTinyModelLoads) { EXPECT_EQ(load_edited({}), ""); }

TEST(Deepseek4Load, MissingKeysAreNamed) {
    for (const char* key :
         {"attention.q_lora_rank", "attention.sliding_window", "expert_shared_count", "expert_weights_scale",
          "expert_weights_norm", "expert_gating_func", "swiglu_clamp_exp", "swiglu_clamp_shexp",
          "attention.indexer.head_count", "attention.indexer.key_length", "attention.indexer.top_k",
          "attention.output_group_count", "attention.output_lora_rank", "attention.compress_ratios",
          "attention.compress_rope_freq_base", "hyper_connection.count", "hyper_connection.sinkhorn_iterations",
          "hyper_connection.epsilon", "hash_layer_count", "embedding_length_out", "rope.scaling.type",
          "rope.scaling.factor", "rope.scaling.original_context_length", "rope.scaling.yarn_beta_fast",
          "rope.scaling.yarn_beta_slow", "attention.key_length", "attention.value_length", "rope.dimension_count",
          "rope.freq_base", "attention.layer_norm_rms_epsilon", "expert_count", "expert_used_count",
          "expert_feed_forward_length"}) {
        const std::string name = std::string("deepseek4.") + key;
        const std::string message = load_edited({}, name);
        EXPECT_NE(message.find(name), std::string::npos) << name << ": " << message;
    }
}

TEST(Deepseek4Load, MissingTensorsAreNamed) {
    for (const char* tensor :
         {"output_hc_fn.weight", "output_hc_scale.weight", "blk.0.hc_attn_fn.weight", "blk.1.hc_ffn_base.weight",
          "blk.0.attn_sinks.weight", "blk.2.attn_q_a_norm.weight", "blk.4.attn_output_a.weight",
          "blk.2.attn_compressor_ape.weight", "blk.3.attn_compressor_kv.weight", "blk.4.indexer_compressor_gate.weight",
          "blk.2.indexer.attn_q_b.weight", "blk.4.indexer.proj.weight", "blk.1.ffn_gate_tid2eid.weight",
          "blk.3.exp_probs_b.bias", "blk.4.ffn_up_shexp.weight", "blk.0.ffn_down_exps.weight"}) {
        test::TinyDeepseek4 edit;
        edit.drop_tensor = tensor;
        const std::string message = load_edited(edit);
        EXPECT_NE(message.find(tensor), std::string::npos) << tensor << ": " << message;
    }
}

// An MTP block (as llama.cpp's converter writes one after the trunk) is loaded and kept; the
// trunk's logits do not depend on it, and a missing MTP tensor is named like any other.
TEST(Deepseek4Load, AnMtpBlockIsLoadedBesideTheTrunk) {
    test::ScratchDir dir;
    test::TinyDeepseek4 with_mtp;
    with_mtp.mtp = true;
    const std::string plain_path = test::write_tiny_deepseek4(dir.path("plain.gguf"));
    const std::string mtp_path = test::write_tiny_deepseek4(dir.path("mtp.gguf"), with_mtp);
    auto plain_file = GgufFile::open(plain_path);
    auto mtp_file = GgufFile::open(mtp_path);
    ASSERT_TRUE(plain_file && mtp_file);
    auto plain = Model::load(*plain_file);
    auto mtp = Model::load(*mtp_file);
    ASSERT_TRUE(plain) << plain.status().message();
    ASSERT_TRUE(mtp) << mtp.status().message();
    EXPECT_EQ((*mtp)->config().n_layer, 5u);
    EXPECT_EQ((*mtp)->config().n_mtp_layers, 1u);
    const std::vector<int32_t> tokens = {5, 17, 90, 3, 41, 8, 77, 12, 60, 33};
    std::vector<int32_t> pos(tokens.size());
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    ThreadPool pool(ThreadPool::Options{.threads = 1});
    CpuContext ctx(pool);
    std::vector<std::vector<float>> logits;
    for (Model* m : {plain->get(), mtp->get()}) {
        KvCache kv = m->make_kv_cache(16);
        RecurrentState rs = m->make_recurrent_state();
        logits.emplace_back(tokens.size() * m->config().n_vocab);
        m->forward_with_state(Batch{tokens.data(), pos.data(), static_cast<int64_t>(tokens.size()), 0}, kv, rs,
                              logits.back().data(), LogitsFor::All, ctx);
    }
    EXPECT_EQ(logits[0], logits[1]);
    with_mtp.drop_tensor = "blk.5.nextn.eh_proj.weight";
    EXPECT_NE(load_edited(with_mtp).find("blk.5.nextn.eh_proj.weight"), std::string::npos);
}

TEST(Deepseek4Load, AHashTableNamingAMissingExpertIsRefused) {
    test::TinyDeepseek4 edit;
    edit.bad_expert_id = 8;  // the tiny model has experts 0..7
    const std::string message = load_edited(edit);
    EXPECT_NE(message.find("blk.1.ffn_gate_tid2eid.weight: token 7 names expert 8, outside 0..7"), std::string::npos)
        << message;
    edit.bad_expert_id = 0;  // a valid id (a repeat of another pick is allowed): loads
    EXPECT_EQ(load_edited(edit), "");
}

TEST(Deepseek4Load, UnsupportedRatiosAreRefused) {
    test::TinyDeepseek4 edit;
    edit.ratios = {0, 0, 4, 64, 4};  // the tensors of a ratio-64 block would be HCA-shaped
    const std::string message = load_edited(edit);
    EXPECT_NE(message.find("deepseek4.attention.compress_ratios[3] = 64"), std::string::npos) << message;
    edit.ratios = {0, 0, 4, 128};  // fewer ratios than blocks
    EXPECT_NE(load_edited(edit).find("deepseek4.attention.compress_ratios"), std::string::npos);
}

TEST(Deepseek4Load, OtherGatingAndShapesAreRefused) {
    test::TinyDeepseek4 edit;
    edit.edit_keys = [](GgufWriter& w) { w.set_u32("deepseek4.expert_gating_func", 2); };
    EXPECT_NE(load_edited(edit).find("deepseek4.expert_gating_func = 2"), std::string::npos);
    edit.edit_keys = [](GgufWriter& w) { w.set_u32("deepseek4.attention.output_group_count", 3); };
    EXPECT_NE(load_edited(edit).find("deepseek4.attention.output_group_count"), std::string::npos);
    edit.edit_keys = [](GgufWriter& w) { w.set_u32("deepseek4.embedding_length_out", 64); };
    EXPECT_NE(load_edited(edit).find("deepseek4.embedding_length_out"), std::string::npos);
    edit.edit_keys = [](GgufWriter& w) { w.set_u32("deepseek4.attention.head_count_kv", 2); };
    EXPECT_NE(load_edited(edit).find("deepseek4.attention.head_count_kv"), std::string::npos);
}

}  // namespace
}  // namespace strata
