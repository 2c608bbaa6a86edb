// Model::forward_multi: several sequences in one forward pass give each sequence the logits it
// gets alone, on every fixture architecture. The fused pass concatenates the sequences' tokens
// for the matmuls, norms and FFNs, which compute each row on its own (one dot product per row
// and output, experts summed per token in a fixed order), and runs attention and the recurrent
// layers per sequence with the single-sequence code; so the logits are bit-identical, and the
// test holds them to that. The default (looping) forward_multi is checked the same way.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "model/model.h"
#include "support/testdata.h"

namespace strata {
namespace {

// A model that only has the single-sequence passes of another, so forward_multi is the base
// class's default: what the GPU model and unconverted architectures get.
class SingleSequenceOnly final : public Model {
public:
    explicit SingleSequenceOnly(Model& inner) : inner_(inner) { config_ = inner.config(); }
    KvCache make_kv_cache(int64_t n_ctx) const override { return inner_.make_kv_cache(n_ctx); }
    RecurrentState make_recurrent_state() const override { return inner_.make_recurrent_state(); }
    void forward(const Batch& batch, KvCache& kv, float* logits, LogitsFor which, CpuContext& ctx) override {
        inner_.forward(batch, kv, logits, which, ctx);
    }
    void forward_with_state(const Batch& batch, KvCache& kv, RecurrentState& state, float* logits, LogitsFor which,
                            CpuContext& ctx) override {
        inner_.forward_with_state(batch, kv, state, logits, which, ctx);
    }

private:
    Model& inner_;
};

// One sequence of the test: a prefix computed first, then a chunk whose logits are compared.
struct Part {
    std::vector<int32_t> prefix, chunk;
    LogitsFor which;
};

const std::vector<Part>& parts() {
    // A decode step deep in its sequence, a prompt chunk from position 0, a mid-sequence chunk,
    // and a second decode step: the mix a continuous-batching step holds.
    static const std::vector<Part> p = {
        {{5, 17, 99, 300, 41, 8}, {77}, LogitsFor::Last},
        {{}, {3, 1000, 12, 64, 9, 250, 31}, LogitsFor::All},
        {{2000, 64, 128}, {7, 7, 81, 1024}, LogitsFor::All},
        {{11, 200}, {37}, LogitsFor::All},
    };
    return p;
}

int64_t logit_rows(const Part& p) { return p.which == LogitsFor::Last ? 1 : static_cast<int64_t>(p.chunk.size()); }

struct Sequence {
    KvCache kv;
    RecurrentState state;
    std::vector<float> logits;
};

std::vector<Sequence> fresh_sequences(const Model& model) {
    std::vector<Sequence> seqs;
    for (const Part& p : parts()) {
        seqs.push_back(Sequence{model.make_kv_cache(32), model.make_recurrent_state(),
                                std::vector<float>(static_cast<size_t>(logit_rows(p) * model.config().n_vocab))});
    }
    return seqs;
}

SequenceStep step_of(const std::vector<int32_t>& tokens, int64_t pos0, Sequence& s, float* logits, LogitsFor which) {
    return SequenceStep{tokens.data(), static_cast<int64_t>(tokens.size()), pos0, &s.kv, &s.state, logits, which};
}

// Every sequence alone: its prefix, then its chunk, each one forward_with_state call.
std::vector<Sequence> alone(Model& model, CpuContext& ctx) {
    std::vector<Sequence> seqs = fresh_sequences(model);
    std::vector<float> scratch(static_cast<size_t>(model.config().n_vocab) * 8);
    for (size_t i = 0; i < parts().size(); ++i) {
        const Part& p = parts()[i];
        Sequence& s = seqs[i];
        const int64_t n_prefix = static_cast<int64_t>(p.prefix.size());
        std::vector<int32_t> pos(p.prefix.size() + p.chunk.size());
        std::iota(pos.begin(), pos.end(), 0);
        if (n_prefix > 0) {
            model.forward_with_state(Batch{p.prefix.data(), pos.data(), n_prefix, 0}, s.kv, s.state, scratch.data(),
                                     LogitsFor::Last, ctx);
        }
        model.forward_with_state(Batch{p.chunk.data(), pos.data() + n_prefix, static_cast<int64_t>(p.chunk.size()), n_prefix},
                                 s.kv, s.state, s.logits.data(), p.which, ctx);
    }
    return seqs;
}

// All sequences together: the prefixes in one forward_multi pass, then the chunks in another.
std::vector<Sequence> together(Model& model, CpuContext& ctx) {
    std::vector<Sequence> seqs = fresh_sequences(model);
    std::vector<std::vector<float>> prefix_logits;
    std::vector<SequenceStep> steps;
    for (size_t i = 0; i < parts().size(); ++i) {
        const Part& p = parts()[i];
        if (p.prefix.empty()) continue;
        prefix_logits.emplace_back(static_cast<size_t>(model.config().n_vocab));
        steps.push_back(step_of(p.prefix, 0, seqs[i], prefix_logits.back().data(), LogitsFor::Last));
    }
    model.forward_multi(steps, ctx);
    steps.clear();
    for (size_t i = 0; i < parts().size(); ++i) {
        const Part& p = parts()[i];
        steps.push_back(step_of(p.chunk, static_cast<int64_t>(p.prefix.size()), seqs[i], seqs[i].logits.data(), p.which));
    }
    model.forward_multi(steps, ctx);
    return seqs;
}

void expect_same_logits(const std::vector<Sequence>& want, const std::vector<Sequence>& got) {
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(want[i].logits.size(), got[i].logits.size());
        size_t differ = 0;
        for (size_t j = 0; j < want[i].logits.size(); ++j) differ += want[i].logits[j] != got[i].logits[j];
        EXPECT_EQ(differ, 0u) << "sequence " << i << ": " << differ << " of " << want[i].logits.size()
                              << " logits differ from the sequence's own forward pass";
    }
}

class MultiSequence : public ::testing::TestWithParam<std::string> {};

void check_fused_pass(const std::string& name, KvCacheType kv_type) {
    const std::string path = test::model_fixture_stem(name) + ".gguf";
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    (*model)->set_kv_type(kv_type);
    EXPECT_TRUE((*model)->fuses_sequences()) << "every CPU architecture has a fused multi-sequence pass";
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    const std::vector<Sequence> want = alone(**model, ctx);
    expect_same_logits(want, together(**model, ctx));
    // The recurrent state advanced by exactly each sequence's tokens.
    const std::vector<Sequence> got = together(**model, ctx);
    for (size_t i = 0; i < parts().size(); ++i) {
        if (got[i].state.empty()) continue;
        EXPECT_EQ(got[i].state.n_past(), static_cast<int64_t>(parts()[i].prefix.size() + parts()[i].chunk.size()));
    }
}

TEST_P(MultiSequence, FusedPassGivesEachSequenceItsOwnLogits) { check_fused_pass(GetParam(), KvCacheType::F32); }

// An f16 cache is per sequence too: rows are rounded on store whatever else shares the batch.
TEST_P(MultiSequence, FusedPassWithAnF16CacheToo) { check_fused_pass(GetParam(), KvCacheType::F16); }

TEST_P(MultiSequence, DefaultPassLoopsOverTheSequences) {
    const std::string path = test::model_fixture_stem(GetParam()) + ".gguf";
    STRATA_SKIP_IF_MISSING(path);
    auto file = GgufFile::open(path);
    ASSERT_TRUE(file);
    auto model = Model::load(*file);
    ASSERT_TRUE(model) << model.status().message();
    SingleSequenceOnly looping(**model);
    EXPECT_FALSE(looping.fuses_sequences());
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    CpuContext ctx(pool);
    expect_same_logits(alone(**model, ctx), together(looping, ctx));
}

INSTANTIATE_TEST_SUITE_P(Architectures, MultiSequence,
                         ::testing::Values("llama", "qwen3", "qwen3moe", "mixtral", "deepseek3", "gptoss", "qwen3next",
                                           "qwen35moe", "project:qwen4exp"),
                         [](const auto& param_info) { return test::model_fixture_label(param_info.param); });

}  // namespace
}  // namespace strata
