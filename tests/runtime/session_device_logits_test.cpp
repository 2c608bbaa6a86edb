// Sessions that leave their logits on the model's device (SessionOptions::logits_on_device), on
// the CPU through a model that keeps its rows as a GPU model does (support/device_rows_model.h):
// sampling and logits() give what the host path gives, batched sessions read their own rows, and a
// row replaced by another session's pass is an error the caller can catch, not a crash.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "support/device_rows_model.h"
#include "support/generate_tokens.h"
#include "support/testdata.h"

namespace strata {
namespace {

class SessionDeviceLogits : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string path = test::testdata_path("models/qwen3moe.gguf");
        STRATA_SKIP_IF_MISSING(path);
        auto opened = GgufFile::open(path);
        ASSERT_TRUE(opened) << opened.status().message();
        file_.emplace(std::move(*opened));
        auto loaded = Model::load(*file_);
        ASSERT_TRUE(loaded) << loaded.status().message();
        model_ = std::move(*loaded);
        device_.emplace(*model_);
    }
    SessionOptions device_options() const { return SessionOptions{.n_ctx = 64, .n_batch = 5, .logits_on_device = true}; }

    std::optional<GgufFile> file_;
    std::unique_ptr<Model> model_;
    std::optional<test::DeviceRowsModel> device_;
    ThreadPool pool_{ThreadPool::Options{.threads = 2}};
};

TEST_F(SessionDeviceLogits, SamplesWhatTheHostLogitsSample) {
    const std::vector<int32_t> prompt = {5, 17, 99, 300, 41, 8, 77};
    for (const SamplingParams& p : {SamplingParams{.temperature = 0.0f}, SamplingParams{.seed = 9},
                                    SamplingParams{.temperature = 1.2f, .top_k = 0, .top_p = 0.9f,
                                                   .repetition_penalty = 1.3f, .seed = 4}}) {
        Session host(*model_, SessionOptions{.n_ctx = 64, .n_batch = 5}, pool_);
        Session device(*device_, device_options(), pool_);
        const std::vector<int32_t> want = test::generate_tokens(host, p, prompt, 8);
        EXPECT_EQ(test::generate_tokens(device, p, prompt, 8), want) << "temperature " << p.temperature;
        const std::vector<float> host_row(host.logits(), host.logits() + host.n_vocab());
        const std::vector<float> device_row(device.logits(), device.logits() + device.n_vocab());
        EXPECT_EQ(device_row, host_row);
    }
}

TEST_F(SessionDeviceLogits, BatchedSessionsReadTheirOwnRows) {
    Session a(*device_, device_options(), pool_), b(*device_, device_options(), pool_);
    CpuContext ctx(pool_);
    const std::vector<int32_t> ta = {5, 17, 99}, tb = {300, 41};
    const SessionChunk chunks[] = {{&a, ta}, {&b, tb}};
    ASSERT_TRUE(Session::append_batched(chunks, ctx));
    const std::vector<float> a_row(a.logits(), a.logits() + a.n_vocab());
    const std::vector<float> b_row(b.logits(), b.logits() + b.n_vocab());
    Session alone(*model_, SessionOptions{.n_ctx = 64, .n_batch = 5}, pool_);
    ASSERT_TRUE(alone.append(tb));
    EXPECT_EQ(b_row, std::vector<float>(alone.logits(), alone.logits() + alone.n_vocab()));
    EXPECT_NE(a_row, b_row);
}

TEST_F(SessionDeviceLogits, ARowReplacedByAnotherPassIsAnError) {
    Session a(*device_, device_options(), pool_), b(*device_, device_options(), pool_);
    ASSERT_TRUE(a.append(std::vector<int32_t>{5, 17}));
    ASSERT_TRUE(b.append(std::vector<int32_t>{99}));  // replaces a's row
    Sampler sampler(SamplingParams{.temperature = 0.0f});
    EXPECT_THROW(a.sample(sampler), std::logic_error);
    EXPECT_THROW(static_cast<void>(a.logits()), std::logic_error);
    EXPECT_NO_THROW(b.sample(sampler));
    // Read before the next pass, a row stays on the host for good.
    ASSERT_TRUE(a.append(std::vector<int32_t>{8}));
    const std::vector<float> row(a.logits(), a.logits() + a.n_vocab());
    ASSERT_TRUE(b.append(std::vector<int32_t>{41}));
    EXPECT_EQ(std::vector<float>(a.logits(), a.logits() + a.n_vocab()), row);
}

}  // namespace
}  // namespace strata
