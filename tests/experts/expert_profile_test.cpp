// Routing profile files (experts/expert_profile.h): a saved profile loads back equal, malformed or
// mismatched files are refused with a message naming the field and the fix, hottest_first() orders
// by count then layer then expert, and the summary's concentration figures are right.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/file.h"
#include "experts/expert_profile.h"
#include "experts/expert_profile_summary.h"
#include "support/scratch.h"

namespace strata {
namespace {

ExpertProfile sample_profile() {
    ExpertProfile p;
    p.model = {"Tiny \"MoE\" — test", "qwen3moe", 123456789012ull, 4, 4, 2};
    p.prompts = 3;
    p.tokens = 10;
    p.generated_tokens = 2;
    // Layer 0 is dense (absent); each listed layer routes 10 tokens × 2 experts.
    p.layers = {{1, {5, 5, 5, 5}}, {2, {0, 9, 1, 10}}, {3, {20, 0, 0, 0}}};
    return p;
}

// The message of a profile that fails to load from `json`.
std::string load_error(const std::string& json) {
    test::ScratchDir dir;
    const std::string path = dir.path("p.json");
    EXPECT_TRUE(write_string_to_file(path, json));
    auto r = load_expert_profile(path);
    EXPECT_FALSE(r) << "accepted: " << json;
    return r ? std::string() : r.status().message();
}

// sample_profile's JSON with one piece of text replaced.
std::string sample_with(const std::string& from, const std::string& to) {
    std::string s = expert_profile_to_json(sample_profile());
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

TEST(ExpertProfile, RoundTrip) {
    test::ScratchDir dir;
    const std::string path = dir.path("profile.json");
    const ExpertProfile p = sample_profile();
    ASSERT_TRUE(save_expert_profile(path, p));
    auto q = load_expert_profile(path, p.model);
    ASSERT_TRUE(q) << q.status().message();
    EXPECT_EQ(q->version, kExpertProfileVersion);
    EXPECT_EQ(q->model.name, p.model.name);
    EXPECT_EQ(q->model.architecture, p.model.architecture);
    EXPECT_EQ(q->model.file_bytes, p.model.file_bytes);
    EXPECT_EQ(q->model.n_layer, p.model.n_layer);
    EXPECT_EQ(q->model.n_expert, p.model.n_expert);
    EXPECT_EQ(q->model.n_expert_used, p.model.n_expert_used);
    EXPECT_EQ(q->prompts, p.prompts);
    EXPECT_EQ(q->tokens, p.tokens);
    EXPECT_EQ(q->generated_tokens, p.generated_tokens);
    ASSERT_EQ(q->layers.size(), p.layers.size());
    for (size_t i = 0; i < p.layers.size(); ++i) {
        EXPECT_EQ(q->layers[i].layer, p.layers[i].layer);
        EXPECT_EQ(q->layers[i].counts, p.layers[i].counts);
    }
    // One line per layer: the file stays readable for large models.
    const std::string text = expert_profile_to_json(p);
    EXPECT_NE(text.find("{\"layer\": 2, \"counts\": [0, 9, 1, 10]}"), std::string::npos) << text;
}

TEST(ExpertProfile, MalformedFilesAreRefusedWithTheField) {
    struct Case {
        std::string json, expected;
    };
    const Case cases[] = {
        {"", "not valid JSON"},
        {"{\"format\": ", "not valid JSON"},
        {"[1, 2]", "expected a JSON object"},
        {sample_with("strata-expert-profile", "something-else"), "not an expert profile"},
        {sample_with("\"version\": 1", "\"version\": 2"), "version: expected 1, got 2 (written by a newer strata"},
        {sample_with("\"version\": 1", "\"version\": \"1\""), "version: expected an unsigned integer"},
        {sample_with("\"prompts\": 3,", ""), "prompts: missing"},
        {sample_with("\"n_expert\": 4,", "\"n_expert\": 0,"), "model.n_expert: expected 1.."},
        {sample_with("\"n_expert_used\": 2", "\"n_expert_used\": 5"), "model.n_expert_used: expected 1..n_expert"},
        {sample_with("[5, 5, 5, 5]", "[5, 5, 5]"), "layers[0].counts: expected 4 counts (n_expert), got 3"},
        {sample_with("[5, 5, 5, 5]", "[5, -5, 5, 5]"), "layers[0].counts[1]: expected an unsigned integer, got -5"},
        {sample_with("[5, 5, 5, 5]", "[5, 5.5, 5, 5]"), "layers[0].counts[1]: expected an unsigned integer"},
        {sample_with("\"layer\": 3", "\"layer\": 4"), "layers[2].layer: expected a layer index below n_layer (4), got 4"},
        {sample_with("\"layer\": 2", "\"layer\": 1"), "layers[1].layer: expected a layer after 1"},
        {sample_with("\"generated_tokens\": 2", "\"generated_tokens\": 11"), "generated_tokens: expected at most"},
    };
    for (const Case& c : cases) {
        const std::string message = load_error(c.json);
        EXPECT_NE(message.find(c.expected), std::string::npos) << "message: " << message;
        EXPECT_NE(message.find("expert profile "), std::string::npos) << "the file is not named: " << message;
    }
    auto missing = load_expert_profile("/nonexistent/profile.json");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.status().message().find("/nonexistent/profile.json"), std::string::npos);
}

TEST(ExpertProfile, ProfilesOfOtherModelsAreRefused) {
    const ExpertProfile p = sample_profile();
    EXPECT_TRUE(expert_profile_matches(p, p.model));
    // Another quantization of the same model: only the size differs, and that is accepted.
    ExpertProfileModel requantized = p.model;
    requantized.file_bytes /= 2;
    EXPECT_TRUE(expert_profile_matches(p, requantized));

    struct Case {
        void (*change)(ExpertProfileModel&);
        const char* expected;
    };
    const Case cases[] = {
        {[](ExpertProfileModel& m) { m.name = "Other"; }, "recorded on model \"Tiny \"MoE\" — test\", not on this one (\"Other\")"},
        {[](ExpertProfileModel& m) { m.architecture = "mixtral"; }, "architecture: expected mixtral"},
        {[](ExpertProfileModel& m) { m.n_layer = 48; }, "n_layer: expected 48 (the model's), got 4"},
        {[](ExpertProfileModel& m) { m.n_expert = 128; }, "n_expert: expected 128 (the model's), got 4"},
        {[](ExpertProfileModel& m) { m.n_expert_used = 1; }, "n_expert_used: expected 1 (the model's), got 2"},
    };
    for (const Case& c : cases) {
        ExpertProfileModel other = p.model;
        c.change(other);
        const Status s = expert_profile_matches(p, other);
        ASSERT_FALSE(s);
        EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
        EXPECT_NE(s.message().find("strata profile"), std::string::npos) << "no fix named: " << s.message();
    }
    // Through the file: the path is named too.
    test::ScratchDir dir;
    ASSERT_TRUE(save_expert_profile(dir.path("p.json"), p));
    ExpertProfileModel other = p.model;
    other.n_expert = 8;
    auto r = load_expert_profile(dir.path("p.json"), other);
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find(dir.path("p.json")), std::string::npos) << r.status().message();
}

TEST(ExpertProfile, HottestFirstOrdersByCountThenLayerThenExpert) {
    const std::vector<ExpertKey> order = hottest_first(sample_profile());
    const std::vector<ExpertKey> want = {
        {3, 0},                          // 20
        {2, 3},                          // 10
        {2, 1},                          // 9
        {1, 0}, {1, 1}, {1, 2}, {1, 3},  // 5 each: by expert
        {2, 2},                          // 1
        {2, 0}, {3, 1}, {3, 2}, {3, 3},  // never routed: by layer, then expert
    };
    ASSERT_EQ(order.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(order[i].layer, want[i].layer) << "position " << i;
        EXPECT_EQ(order[i].expert, want[i].expert) << "position " << i;
    }
    // Ties across layers go to the lower layer.
    ExpertProfile tie = sample_profile();
    tie.layers = {{1, {0, 7, 0, 0}}, {2, {7, 0, 0, 0}}};
    const std::vector<ExpertKey> t = hottest_first(tie);
    EXPECT_EQ(t[0], (ExpertKey{1, 1}));
    EXPECT_EQ(t[1], (ExpertKey{2, 0}));
}

TEST(ExpertProfile, SummaryMeasuresConcentration) {
    const ExpertProfileSummary s = summarize_expert_profile(sample_profile(), 0.25);
    EXPECT_EQ(s.top_per_layer, 1u);  // a quarter of 4 experts
    ASSERT_EQ(s.layers.size(), 3u);
    EXPECT_DOUBLE_EQ(s.layers[0].top_share, 0.25);  // uniform
    EXPECT_DOUBLE_EQ(s.layers[1].top_share, 0.5);
    EXPECT_DOUBLE_EQ(s.layers[2].top_share, 1.0);
    EXPECT_EQ(s.layers[1].unused, 1u);
    EXPECT_EQ(s.layers[2].unused, 3u);
    EXPECT_EQ(s.routed, 60u);
    EXPECT_EQ(s.experts, 12u);
    EXPECT_EQ(s.unused, 4u);
    // Top quarter of 12 pairs = 3: 20 + 10 + 9 of 60.
    EXPECT_DOUBLE_EQ(s.top_share, 39.0 / 60.0);
    EXPECT_EQ(s.cover_half, 2u);  // 20 + 10 = 30 ≥ 30
    EXPECT_EQ(s.cover_90, 6u);    // 20 + 10 + 9 + 5 + 5 + 5 = 54 ≥ 54
}

}  // namespace
}  // namespace strata
