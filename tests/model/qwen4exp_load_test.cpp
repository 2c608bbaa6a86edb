// qwen4exp files the recipe cannot run are refused at load with the name of what is wrong: each
// case is the project's fixture (tests/model/data/qwen4exp.gguf) with one key or tensor taken
// away or changed.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "backend/cpu/cpu_context.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/model.h"
#include "support/scratch.h"
#include "support/testdata.h"

namespace strata {
namespace {

struct Edit {
    std::string drop_key = {};     // metadata key left out
    std::string drop_tensor = {};  // tensor left out
    std::function<void(GgufWriter&)> add = {};  // keys set after the copy (replacing the fixture's)
    std::string shrink_tensor = {};             // tensor whose last dimension is halved
};

// The fixture with `edit` applied, loaded: the error message, or "" when it loads.
std::string load_edited(const Edit& edit) {
    const std::string src = test::model_fixture_stem("project:qwen4exp") + ".gguf";
    auto orig = GgufFile::open(src);
    EXPECT_TRUE(orig) << src;
    if (!orig) return "no fixture";
    test::ScratchDir dir;
    GgufWriter w;
    for (const auto& e : orig->metadata()) {
        if (e.key != edit.drop_key) w.set(e.key, e.value);
    }
    if (edit.add) edit.add(w);
    for (const auto& t : orig->tensors()) {
        if (t.name == edit.drop_tensor) continue;
        std::vector<uint64_t> ne(t.ne, t.ne + t.n_dims);
        const uint8_t* d = orig->tensor_data(t);
        uint64_t bytes = t.n_bytes;
        if (t.name == edit.shrink_tensor) {
            ne.back() /= 2;
            bytes /= 2;
        }
        EXPECT_TRUE(w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(d, d + bytes)));
    }
    EXPECT_TRUE(w.write(dir.path("edited.gguf")));
    auto f = GgufFile::open(dir.path("edited.gguf"));
    EXPECT_TRUE(f) << f.status().message();
    if (!f) return "unreadable";
    auto m = Model::load(*f);
    return m ? "" : m.status().message();
}

class Qwen4ExpRefusal : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string src = test::model_fixture_stem("project:qwen4exp") + ".gguf";
        STRATA_SKIP_IF_MISSING(src);
    }
};

TEST_F(Qwen4ExpRefusal, TheFixtureItselfLoads) { EXPECT_EQ(load_edited({}), ""); }

TEST_F(Qwen4ExpRefusal, MissingKeysAreNamed) {
    for (const char* key : {"qwen4exp.hyper_connection.count", "qwen4exp.hyper_connection.low_rank",
                            "qwen4exp.attention.indexer.head_count", "qwen4exp.attention.indexer.top_k",
                            "qwen4exp.ple.layer_multipliers", "qwen4exp.ple.head_offsets", "qwen4exp.ple.eos_token_id",
                            "qwen4exp.embedding_length_per_layer_input"}) {
        const std::string message = load_edited({.drop_key = key});
        EXPECT_NE(message.find(key), std::string::npos) << key << ": " << message;
    }
}

TEST_F(Qwen4ExpRefusal, MissingTensorsAreNamed) {
    for (const char* tensor : {"output_hc_up.weight", "blk.0.hc_ffn_inject.weight", "blk.1.indexer.k_proj.weight",
                               "blk.3.indexer.q_norm.weight", "blk.2.ple_conv1d.weight", "per_layer_token_embd.weight",
                               "blk.2.ssm_alpha.weight", "blk.3.ffn_gate_inp_shexp.weight"}) {
        const std::string message = load_edited({.drop_tensor = tensor});
        EXPECT_NE(message.find(std::string("tensor ") + tensor + " is missing"), std::string::npos)
            << tensor << ": " << message;
    }
}

// A table with fewer rows than the hash heads address (head_offsets + head_vocab_sizes).
TEST_F(Qwen4ExpRefusal, APleTableTooShortIsNamed) {
    const std::string message = load_edited({.shrink_tensor = "per_layer_token_embd.weight"});
    EXPECT_NE(message.find("per_layer_token_embd.weight has 256 rows"), std::string::npos) << message;
}

TEST_F(Qwen4ExpRefusal, APleArrayOfTheWrongLengthIsNamed) {
    const std::string message = load_edited({.add = [](GgufWriter& w) {
        w.set("qwen4exp.ple.head_vocab_sizes", GgufValue::make_array(GgufValueType::U64, {GgufValue::make_uint64(97)}));
    }});
    EXPECT_NE(message.find("qwen4exp.ple.head_vocab_sizes: expected 4 integers, got 1"), std::string::npos) << message;
}

// The PLE block keeps its history beside a DeltaNet state: on an attention block it is refused.
TEST_F(Qwen4ExpRefusal, APleBlockOnAnAttentionBlockIsRefused) {
    const std::string message = load_edited({.add = [](GgufWriter& w) {
        w.set("qwen4exp.ple.layers", GgufValue::make_array(GgufValueType::I32, {GgufValue::make_int(GgufValueType::I32, 1)}));
    }});
    EXPECT_NE(message.find("qwen4exp.ple.layers: block 1 is not a DeltaNet block"), std::string::npos) << message;
}

TEST_F(Qwen4ExpRefusal, ACompressRatioThatDoesNotDivideTheBudgetIsRefused) {
    const std::string message = load_edited({.add = [](GgufWriter& w) {
        std::vector<GgufValue> ratios;
        for (int r : {0, 3, 0, 4}) ratios.push_back(GgufValue::make_int(GgufValueType::U32, r));
        w.set("qwen4exp.attention.compress_ratios", GgufValue::make_array(GgufValueType::U32, std::move(ratios)));
    }});
    EXPECT_NE(message.find("top_k (8) must be a multiple of compress ratio 3"), std::string::npos) << message;
}

// The other dialect of the published files and forks (NEW_ARCHS.md §A2.2): HC gammas as
// {n_embd, hc} and routed gate/up experts fused into ffn_gate_up_exps (each expert's gate rows,
// then its up rows). The same values in that layout must give the fixture's logits exactly.
std::vector<float> last_logits(const GgufFile& f) {
    auto m = Model::load(f);
    EXPECT_TRUE(m) << m.status().message();
    if (!m) return {};
    const int64_t n = 12;
    std::vector<int32_t> ids(n), pos(n);
    for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(3 + 29 * i % 200), pos[i] = static_cast<int32_t>(i);
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    KvCache kv = (*m)->make_kv_cache(n);
    std::vector<float> logits(static_cast<size_t>((*m)->config().n_vocab));
    (*m)->forward(Batch{ids.data(), pos.data(), n, 0}, kv, logits.data(), LogitsFor::Last, ctx);
    return logits;
}

TEST_F(Qwen4ExpRefusal, TheFusedAndReshapedDialectGivesTheSameLogits) {
    const std::string src = test::model_fixture_stem("project:qwen4exp") + ".gguf";
    auto orig = GgufFile::open(src);
    ASSERT_TRUE(orig) << orig.status().message();
    test::ScratchDir dir;
    GgufWriter w;
    for (const auto& e : orig->metadata()) w.set(e.key, e.value);
    const uint64_t hc = orig->get_uint("qwen4exp.hyper_connection.count", 0);
    int fused = 0, reshaped = 0;
    for (const auto& t : orig->tensors()) {
        std::vector<uint64_t> ne(t.ne, t.ne + t.n_dims);
        const uint8_t* d = orig->tensor_data(t);
        const bool hc_norm = t.name.find("hc_") != std::string::npos && t.name.find("_norm.weight") != std::string::npos;
        if (hc_norm) {
            ne = {t.ne[0] / hc, hc};
            ++reshaped;
        }
        const auto at = t.name.find("ffn_up_exps.weight");
        if (at != std::string::npos) continue;  // written with its gate below
        const auto gate_at = t.name.find("ffn_gate_exps.weight");
        if (gate_at != std::string::npos) {
            const GgufTensorInfo* up = orig->tensor(t.name.substr(0, gate_at) + "ffn_up_exps.weight");
            ASSERT_NE(up, nullptr);
            const uint64_t half = t.n_bytes / t.ne[2];
            std::vector<uint8_t> bytes;
            for (uint64_t e = 0; e < t.ne[2]; ++e) {
                bytes.insert(bytes.end(), d + e * half, d + (e + 1) * half);
                bytes.insert(bytes.end(), orig->tensor_data(*up) + e * half, orig->tensor_data(*up) + (e + 1) * half);
            }
            ASSERT_TRUE(w.add_tensor(t.name.substr(0, gate_at) + "ffn_gate_up_exps.weight", t.type,
                                     {t.ne[0], 2 * t.ne[1], t.ne[2]}, std::move(bytes)));
            ++fused;
            continue;
        }
        ASSERT_TRUE(w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(d, d + t.n_bytes)));
    }
    const uint64_t blocks = orig->get_uint("qwen4exp.block_count", 0);
    EXPECT_EQ(fused, static_cast<int>(blocks));
    EXPECT_EQ(reshaped, static_cast<int>(2 * blocks + 1));
    ASSERT_TRUE(w.write(dir.path("dialect.gguf")));
    auto dialect = GgufFile::open(dir.path("dialect.gguf"));
    ASSERT_TRUE(dialect) << dialect.status().message();
    const std::vector<float> expected = last_logits(*orig), actual = last_logits(*dialect);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(actual, expected);
}

}  // namespace
}  // namespace strata
