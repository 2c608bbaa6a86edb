// Turn checkpoints through the real HTTP server and scheduler on a hybrid fixture (qwen3next:
// DeltaNet layers beside gated attention), whose recurrent state cannot be rewound: a three-turn
// conversation reads only each new turn, as the usage fields and /metrics count it, and answers
// what a server that re-reads every prompt answers; a budget too small for more than one state
// evicts the turn starts, and the next turn is read whole again.
//
// The fixture's vocabulary has no chat markers, so the test template uses its control tokens <s>
// and </s> as the turn start and end, as ChatML uses <|im_start|> and <|im_end|>.
#include <gtest/gtest.h>

#include <sstream>

#include "support/testdata.h"
#include "test_server.h"

namespace strata::server::test {
namespace {

constexpr const char* kTurnTemplate =
    "{% for m in messages %}<s>{{ m.role }}\n{{ m.content }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant\n{% endif %}";

Engine* hybrid_model() {
    static Engine* model = [] () -> Engine* {
        const std::string path = strata::test::testdata_path("models/qwen3next.gguf");
        if (!file_exists(path)) return nullptr;
        auto lm = Engine::open({.model_path = path, .chat_template = kTurnTemplate});
        STRATA_CHECK(lm.is_ok(), lm.status().message().c_str());
        return lm->release();
    }();
    return model;
}

SchedulerOptions options(uint64_t checkpoint_bytes) {
    return SchedulerOptions{.n_slots = 2, .n_ctx = 1024, .n_batch = 16, .max_queue = 8, .checkpoint_bytes = checkpoint_bytes};
}

// Bytes of one state of the model (what each checkpoint holds).
uint64_t state_bytes() { return hybrid_model()->model->make_recurrent_state().bytes(); }

json request(const json& messages) {
    return {{"model", "m"}, {"messages", messages}, {"max_tokens", 6}, {"temperature", 0}, {"ignore_eos", true}};
}

// Where the reply's turn starts in the prompt of `messages`: the tokens of the messages rendered
// without the generation prompt (the same template and tokenizer the server uses).
int64_t reply_start(const json& messages) {
    auto text = hybrid_model()->render_chat(messages, /*add_generation_prompt=*/false, nlohmann::ordered_json::object());
    STRATA_CHECK(text.is_ok(), "render");
    return static_cast<int64_t>(hybrid_model()->tokenize_chat(*text).size());
}

struct Turn {
    std::string content;
    int64_t prompt = 0, cached = 0, completion = 0;
};
Turn ask(TestServer& srv, const json& messages) {
    auto c = srv.client();
    auto r = post(c, "/v1/chat/completions", request(messages));
    Turn t;
    if (!r || r->status != 200) {
        ADD_FAILURE() << (r ? r->body : "no response");
        return t;
    }
    const json j = json::parse(r->body);
    t.content = j["choices"][0]["message"]["content"];
    t.prompt = j["usage"]["prompt_tokens"];
    t.cached = j["usage"]["prompt_tokens_details"]["cached_tokens"];
    t.completion = j["usage"]["completion_tokens"];
    return t;
}

// A counter or gauge of /metrics (-1 when absent).
double metric(TestServer& srv, const std::string& name) {
    auto c = srv.client();
    auto r = c.Get("/metrics");
    if (!r) return -1;
    std::istringstream lines(r->body);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    }
    return -1;
}

json with(json messages, const std::string& role, const std::string& content) {
    messages.push_back({{"role", role}, {"content", content}});
    return messages;
}

TEST(TurnCheckpoints, AThreeTurnConversationReadsOnlyEachNewTurn) {
    if (!hybrid_model()) GTEST_SKIP() << "test data missing: models/qwen3next.gguf";
    TestServer srv({}, options(64 * state_bytes()), hybrid_model());
    TestServer reread({}, options(0), hybrid_model());

    json m1 = with(with(json::array(), "system", "You are a careful coding agent with tools."), "user", "List the files.");
    const Turn t1 = ask(srv, m1);
    EXPECT_EQ(t1.cached, 0);
    json m2 = with(with(m1, "assistant", t1.content), "user", "Now open the first one.");
    const Turn t2 = ask(srv, m2);
    json m3 = with(with(m2, "assistant", t2.content), "user", "Summarize it.");
    const Turn t3 = ask(srv, m3);

    // Each turn resumes where the previous reply's turn started (the reply as the client sends it
    // back need not tokenize as it was generated), or at the reply's end when it does: everything
    // before is not read again.
    for (const auto& [prev_messages, prev, t] : {std::tuple{m1, t1, t2}, std::tuple{m2, t2, t3}}) {
        const int64_t reply_end = prev.prompt + prev.completion - 1;  // the last token is never run
        EXPECT_TRUE(t.cached == reply_start(prev_messages) || t.cached == reply_end)
            << "cached " << t.cached << ", reply starts at " << reply_start(prev_messages) << " and ends at " << reply_end;
        EXPECT_GT(t.cached, 0);
        EXPECT_LT(t.cached, t.prompt);
    }
    EXPECT_EQ(metric(srv, "strata_checkpoint_hits_total"), 2);
    EXPECT_EQ(metric(srv, "strata_checkpoint_misses_total"), 0);
    EXPECT_EQ(metric(srv, "strata_prompt_tokens_checkpoint_total"), t2.cached + t3.cached);
    EXPECT_EQ(metric(srv, "strata_prompt_tokens_cached_total"), t2.cached + t3.cached);
    EXPECT_EQ(metric(srv, "strata_prompt_tokens_read_total"), t1.prompt + (t2.prompt - t2.cached) + (t3.prompt - t3.cached));
    EXPECT_GT(metric(srv, "strata_checkpoint_bytes"), 0);
    EXPECT_LE(metric(srv, "strata_checkpoint_bytes"), metric(srv, "strata_checkpoint_budget_bytes"));

    // A server that keeps no checkpoints reads each prompt whole and answers the same (greedy:
    // equal logits give equal tokens; tests/runtime/session_checkpoint_test.cpp compares the
    // logits themselves bit for bit).
    const Turn full2 = ask(reread, m2);
    const Turn full3 = ask(reread, m3);
    EXPECT_EQ(full2.cached, 0);
    EXPECT_EQ(full3.cached, 0);
    EXPECT_EQ(full2.content, t2.content);
    EXPECT_EQ(full3.content, t3.content);
    EXPECT_EQ(metric(reread, "strata_checkpoint_hits_total"), 0);
    EXPECT_EQ(metric(reread, "strata_checkpoints_stored_total"), 0);
}

TEST(TurnCheckpoints, AnAnthropicTurnReportsTheResumedTokensAsCacheReads) {
    if (!hybrid_model()) GTEST_SKIP() << "test data missing: models/qwen3next.gguf";
    TestServer srv({}, options(64 * state_bytes()), hybrid_model());
    auto c = srv.client();
    json body = {{"model", "m"}, {"max_tokens", 5}, {"system", "Be brief."}, {"messages", json::array({{{"role", "user"}, {"content", "Hello?"}}})}};
    auto r1 = post(c, "/v1/messages", body);
    ASSERT_TRUE(r1 && r1->status == 200) << (r1 ? r1->body : "");
    const json a1 = json::parse(r1->body);
    EXPECT_EQ(a1["usage"]["cache_read_input_tokens"], 0);
    body["messages"].push_back({{"role", "assistant"}, {"content", "A different reply than the one generated."}});
    body["messages"].push_back({{"role", "user"}, {"content", "And then?"}});
    auto r2 = post(c, "/v1/messages", body);
    ASSERT_TRUE(r2 && r2->status == 200) << (r2 ? r2->body : "");
    const json a2 = json::parse(r2->body);
    // The first turn's prompt up to its reply is resumed; the rewritten reply and the new
    // question are read.
    const json first = with(with(json::array(), "system", "Be brief."), "user", "Hello?");
    EXPECT_EQ(a2["usage"]["cache_read_input_tokens"].get<int64_t>(), reply_start(first));
    EXPECT_GT(a2["usage"]["input_tokens"].get<int64_t>(), 0);
    EXPECT_EQ(metric(srv, "strata_checkpoint_hits_total"), 1);
}

TEST(TurnCheckpoints, ABudgetForOneStateEvictsTheTurnStartsAndTheNextTurnIsReadWhole) {
    if (!hybrid_model()) GTEST_SKIP() << "test data missing: models/qwen3next.gguf";
    const uint64_t one = state_bytes();
    TestServer small({}, options(one + one / 2), hybrid_model());
    TestServer large({}, options(64 * one), hybrid_model());
    json m1 = with(with(json::array(), "system", "You are a careful coding agent."), "user", "Read main.cpp.");
    // The client sends the reply back rewritten (thinking dropped, say): the prompt diverges
    // inside it, so only a checkpoint at a turn start can be resumed.
    json m2 = with(with(m1, "assistant", "I read it."), "user", "What does it do?");

    for (TestServer* srv : {&small, &large}) {
        const Turn t1 = ask(*srv, m1);
        EXPECT_EQ(t1.cached, 0);
        // Two turn starts (the user's message, the reply's) and the reply's end were kept.
        EXPECT_EQ(metric(*srv, "strata_checkpoints_stored_total"), 3);
        const double evicted = metric(*srv, "strata_checkpoints_evicted_total");
        const Turn t2 = ask(*srv, m2);
        if (srv == &small) {
            // Each evicted the one before: only the reply's end was left, past the divergence.
            EXPECT_EQ(evicted, 2);
            EXPECT_EQ(t2.cached, 0);
            EXPECT_EQ(metric(*srv, "strata_checkpoint_misses_total"), 1);
            EXPECT_EQ(metric(*srv, "strata_checkpoint_hits_total"), 0);
            EXPECT_LE(metric(*srv, "strata_checkpoint_bytes"), static_cast<double>(one + one / 2));
        } else {
            EXPECT_EQ(evicted, 0);
            EXPECT_EQ(t2.cached, reply_start(m1));
            EXPECT_EQ(metric(*srv, "strata_checkpoint_hits_total"), 1);
            EXPECT_EQ(metric(*srv, "strata_checkpoint_misses_total"), 0);
        }
    }
}

// A side request of another conversation (an agent's title or summary call) between two turns:
// with one slot it overwrites the conversation's rows, and its checkpoints past the shared
// prefix go with them; with two, the least recently used slot takes it and the conversation
// resumes.
TEST(TurnCheckpoints, ASideRequestTakesTheOtherSlotAndTheConversationStillResumes) {
    if (!hybrid_model()) GTEST_SKIP() << "test data missing: models/qwen3next.gguf";
    json m1 = with(with(json::array(), "system", "You are a careful coding agent."), "user", "Read main.cpp.");
    json m2 = with(with(m1, "assistant", "I read it."), "user", "What does it do?");
    const json side = with(json::array(), "user", "Write a title for this chat.");
    for (int slots : {1, 2}) {
        SchedulerOptions o = options(64 * state_bytes());
        o.n_slots = slots;
        TestServer srv({}, o, hybrid_model());
        ask(srv, m1);
        ask(srv, side);
        const Turn t2 = ask(srv, m2);
        // The side request shares only the template's first token with the conversation: not a
        // miss; nor is the next turn where the side request overwrote the conversation.
        EXPECT_EQ(metric(srv, "strata_checkpoint_misses_total"), 0);
        if (slots == 1) {
            EXPECT_EQ(t2.cached, 0);
            EXPECT_GT(metric(srv, "strata_checkpoints_dropped_total"), 0);
            EXPECT_EQ(metric(srv, "strata_checkpoint_hits_total"), 0);
        } else {
            EXPECT_EQ(t2.cached, reply_start(m1));
            EXPECT_EQ(metric(srv, "strata_checkpoint_hits_total"), 1);
        }
    }
}

}  // namespace
}  // namespace strata::server::test
