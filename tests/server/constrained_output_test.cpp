// Constrained output on the built-in model (models/strata-kjv-moe.gguf, a King James Bible model
// that has never seen JSON): 100 random schemas through the scheduler, each output complete JSON
// that the schema checker accepts; and the server's routes: response_format json_schema /
// json_object, a GBNF grammar, tool_choice "required" and Anthropic's tool_choice "any" each
// producing what they promise.
//
// The schemas bound every value (string lengths, array sizes, numbers to 16 digits, whitespace
// to 4 characters), so a budget of 400 tokens always reaches the closing brace: the test asserts
// each generation stopped on its own (the grammar exhausted), never by the budget.
#include <gtest/gtest.h>

#include <random>

#include "core/file.h"
#include "runtime/json_schema_grammar.h"
#include "server/constrained_output.h"
#include "server/scheduler.h"
#include "support/json_schema_check.h"
#include "test_server.h"

namespace strata::server::test {
namespace {

using ojson = nlohmann::ordered_json;

Engine* builtin_model() {
    static Engine* model = [] () -> Engine* {
        const std::string path = std::string(STRATA_SOURCE_DIR) + "/models/strata-kjv-moe.gguf";
        if (!file_exists(path)) return nullptr;
        auto lm = Engine::open({.model_path = path});
        STRATA_CHECK(lm.is_ok(), lm.status().message().c_str());
        return lm->release();
    }();
    return model;
}

// ---- random schemas ---------------------------------------------------------------------------

class SchemaMaker {
public:
    explicit SchemaMaker(uint32_t seed) : rng_(seed) {}

    ojson make(int depth) {
        const int kind = pick(depth >= 2 ? 7 : 9);
        switch (kind) {
            case 0: return {{"type", "integer"}};
            case 1: return {{"type", "number"}};
            case 2: return {{"type", "boolean"}};
            case 3: {
                ojson s = {{"type", "string"}, {"maxLength", 1 + pick(10)}};
                if (pick(2)) s["minLength"] = pick(2);
                return s;
            }
            case 4: {
                ojson values = ojson::array();
                const int n = 1 + pick(4);
                for (int i = 0; i < n; ++i) values.push_back(pick(3) ? ojson(kWords[pick(kWords.size())] + std::to_string(i)) : ojson(i * 7 - 3));
                return {{"enum", values}};
            }
            case 5: return {{"anyOf", {make(depth + 1), {{"type", "null"}}}}};
            case 6: return {{"type", {"string", "null"}}, {"maxLength", 6}};
            case 7: {
                const int min = pick(3);
                ojson s = {{"type", "array"}, {"items", make(depth + 1)}, {"minItems", min}, {"maxItems", min + pick(3)}};
                return s;
            }
            default: return object(depth);
        }
    }

    ojson object(int depth) {
        ojson props = ojson::object();
        ojson required = ojson::array();
        const int n = 1 + pick(depth == 0 ? 4 : 3);
        for (int i = 0; i < n; ++i) {
            const std::string name = kWords[pick(kWords.size())] + std::to_string(i);
            props[name] = make(depth + 1);
            if (pick(3)) required.push_back(name);
        }
        return {{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}};
    }

private:
    int pick(size_t n) { return static_cast<int>(rng_() % n); }
    inline static const std::vector<std::string> kWords = {"name", "verse", "book", "count", "id", "tags", "lord", "day"};
    std::mt19937 rng_;
};

TEST(ConstrainedOutput, HundredRandomSchemasGiveValidJsonOnTheBuiltinModel) {
    Engine* lm = builtin_model();
    if (!lm) GTEST_SKIP() << "built-in model missing";
    ThreadPool pool(ThreadPool::Options{.threads = 2});
    Scheduler sched(*lm->model, *lm->tokenizer, pool, SchedulerOptions{.n_slots = 4, .n_ctx = 512, .n_batch = 64, .max_queue = 128}, nullptr);
    SchemaMaker maker(2024);
    struct Job {
        ojson schema;
        std::shared_ptr<TaskHandle> task;
        std::string text;
        TaskResult result;
    };
    std::vector<Job> jobs(100);
    const std::vector<int32_t> prompt = lm->tokenizer->encode("<|user|>\nAnswer in JSON.\n<|assistant|>\n", lm->tokenizer->wants_bos(), true);
    for (size_t i = 0; i < jobs.size(); ++i) {
        jobs[i].schema = i % 5 == 4 ? maker.make(0) : maker.object(0);  // mostly objects, as response formats are
        auto gbnf = json_schema_to_gbnf(jobs[i].schema, {.strict = true});
        ASSERT_TRUE(gbnf.is_ok()) << gbnf.status().message();
        auto grammar = parse_grammar(*gbnf);
        ASSERT_TRUE(grammar.is_ok()) << grammar.status().message();
        TaskSpec spec;
        spec.prompt = prompt;
        spec.max_tokens = 400;
        spec.sampling.temperature = i % 2 ? 0.0f : 0.8f;  // greedy and sampled
        spec.sampling.seed = i;
        spec.grammar = std::make_shared<const Grammar>(std::move(*grammar));
        jobs[i].task = sched.submit(spec);
        ASSERT_TRUE(jobs[i].task);
    }
    int valid = 0;
    for (Job& j : jobs) {
        for (bool done = false; !done;) {
            auto ev = j.task->next(std::chrono::milliseconds(100));
            if (!ev) continue;
            if (ev->kind == TaskEvent::Kind::Text) {
                j.text += ev->text;
            } else {
                j.result = ev->result;
                done = true;
            }
        }
        EXPECT_EQ(j.result.outcome, TaskOutcome::Stop) << j.schema.dump() << "\n" << j.text;
        const nlohmann::json parsed = nlohmann::json::parse(j.text, nullptr, false);
        if (parsed.is_discarded()) {
            ADD_FAILURE() << "not JSON: " << j.text << "\nschema " << j.schema.dump();
            continue;
        }
        const std::string why = strata::test::schema_violation(nlohmann::json::parse(j.schema.dump()), parsed);
        EXPECT_EQ(why, "") << j.text << "\nschema " << j.schema.dump();
        valid += why.empty();
    }
    EXPECT_EQ(valid, 100);
    std::printf("[ constrained ] %d of %zu outputs valid\n", valid, jobs.size());
}

// ---- the routes -------------------------------------------------------------------------------

class ConstrainedRoutes : public ::testing::Test {
protected:
    void SetUp() override {
        if (!builtin_model()) GTEST_SKIP() << "built-in model missing";
    }
    static nlohmann::json chat(TestServer& srv, nlohmann::json body) {
        auto c = srv.client();
        body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", "Who begat Enos?"}}});
        body["max_tokens"] = 200;
        body["temperature"] = 0;
        auto r = post(c, "/v1/chat/completions", body);
        EXPECT_TRUE(r);
        if (!r) return nullptr;
        nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
        j["http_status"] = r->status;
        return j;
    }
    static const nlohmann::json& weather_tool() {
        static const nlohmann::json tool = {
            {"type", "function"},
            {"function",
             {{"name", "get_weather"},
              {"description", "The weather in a city"},
              {"parameters",
               {{"type", "object"},
                {"properties", {{"city", {{"type", "string"}, {"maxLength", 12}}}, {"unit", {{"enum", {"c", "f"}}}}}},
                {"required", {"city", "unit"}}}}}}};
        return tool;
    }
};

TEST_F(ConstrainedRoutes, ResponseFormatJsonSchemaAndJsonObject) {
    TestServer srv({}, SchedulerOptions{.n_slots = 2, .n_ctx = 512, .n_batch = 64, .max_queue = 16}, builtin_model());
    const nlohmann::json schema = {{"type", "object"},
                                   {"properties", {{"name", {{"type", "string"}, {"maxLength", 10}}}, {"age", {{"type", "integer"}}}}},
                                   {"required", {"name", "age"}},
                                   {"additionalProperties", false}};
    auto r = chat(srv, {{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "person"}, {"schema", schema}, {"strict", true}}}}}});
    ASSERT_EQ(r["http_status"], 200) << r.dump();
    const std::string content = r["choices"][0]["message"]["content"];
    const auto parsed = nlohmann::json::parse(content, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << content;
    EXPECT_EQ(strata::test::schema_violation(schema, parsed), "") << content;
    EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");

    auto obj = chat(srv, {{"response_format", {{"type", "json_object"}}}, {"max_tokens", 300}});
    ASSERT_EQ(obj["http_status"], 200) << obj.dump();
    const std::string text = obj["choices"][0]["message"]["content"];
    // json_object has unbounded strings: either the object closed, or the budget cut it.
    if (obj["choices"][0]["finish_reason"] == "stop") {
        EXPECT_TRUE(nlohmann::json::parse(text, nullptr, false).is_object()) << text;
    }
    EXPECT_EQ(text.substr(0, 1), "{");

    auto bad = chat(srv, {{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", {{"type", "string"}, {"pattern", "a+"}}}}}}}});
    EXPECT_EQ(bad["http_status"], 400);
    EXPECT_NE(bad.dump().find("pattern"), std::string::npos) << bad.dump();
}

// /v1/responses takes the same constraint as text.format, with the schema beside the type.
TEST_F(ConstrainedRoutes, ResponsesTextFormatJsonSchema) {
    TestServer srv({}, SchedulerOptions{.n_slots = 1, .n_ctx = 512, .n_batch = 64, .max_queue = 16}, builtin_model());
    const nlohmann::json schema = {{"type", "object"},
                                   {"properties", {{"verse", {{"type", "integer"}}}, {"book", {{"enum", {"Genesis", "Exodus"}}}}}},
                                   {"required", {"verse", "book"}},
                                   {"additionalProperties", false}};
    auto c = srv.client();
    const nlohmann::json body = {{"model", "m"},
                                 {"input", "Who begat Enos?"},
                                 {"max_output_tokens", 200},
                                 {"temperature", 0},
                                 {"text", {{"format", {{"type", "json_schema"}, {"name", "cite"}, {"schema", schema}, {"strict", true}}}}}};
    auto r = post(c, "/v1/responses", body);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const auto resp = nlohmann::json::parse(r->body);
    EXPECT_EQ(resp["status"], "completed") << r->body;
    EXPECT_EQ(resp["text"]["format"]["name"], "cite");
    std::string text;
    for (const auto& item : resp["output"]) {
        if (item["type"] != "message") continue;
        for (const auto& part : item["content"]) text += part.value("text", "");
    }
    const auto parsed = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << text;
    EXPECT_EQ(strata::test::schema_violation(schema, parsed), "") << text;
}

TEST_F(ConstrainedRoutes, GbnfGrammarField) {
    TestServer srv({}, SchedulerOptions{.n_slots = 1, .n_ctx = 512, .n_batch = 64, .max_queue = 16}, builtin_model());
    auto r = chat(srv, {{"grammar", "root ::= (\"yea\" | \"nay\") \", \" [0-9]{1,3} \" times\"\n"}});
    ASSERT_EQ(r["http_status"], 200) << r.dump();
    const std::string content = r["choices"][0]["message"]["content"];
    EXPECT_TRUE(content.rfind("yea, ", 0) == 0 || content.rfind("nay, ", 0) == 0) << content;
    EXPECT_EQ(content.substr(content.size() - 6), " times") << content;
    auto bad = chat(srv, {{"grammar", "root ::= [a-z\n"}});
    EXPECT_EQ(bad["http_status"], 400);
    EXPECT_NE(bad.dump().find("line 1, column"), std::string::npos) << bad.dump();
}

TEST_F(ConstrainedRoutes, ToolChoiceRequiredAndNamedGiveAValidCall) {
    TestServer srv({}, SchedulerOptions{.n_slots = 1, .n_ctx = 512, .n_batch = 64, .max_queue = 16}, builtin_model());
    const nlohmann::json other = {{"type", "function"}, {"function", {{"name", "count_verses"}, {"parameters", {{"type", "object"}, {"properties", {{"book", {{"enum", {"Genesis", "Exodus"}}}}}}, {"required", {"book"}}}}}}};
    for (const nlohmann::json& choice : {nlohmann::json("required"), nlohmann::json{{"type", "function"}, {"function", {{"name", "get_weather"}}}}}) {
        auto r = chat(srv, {{"tools", {other, weather_tool()}}, {"tool_choice", choice}});
        ASSERT_EQ(r["http_status"], 200) << r.dump();
        const auto& msg = r["choices"][0]["message"];
        ASSERT_TRUE(msg.contains("tool_calls")) << r.dump();
        ASSERT_EQ(msg["tool_calls"].size(), 1u) << r.dump();
        EXPECT_EQ(r["choices"][0]["finish_reason"], "tool_calls");
        const auto& fn = msg["tool_calls"][0]["function"];
        const std::string name = fn["name"];
        const auto args = nlohmann::json::parse(fn["arguments"].get<std::string>(), nullptr, false);
        ASSERT_FALSE(args.is_discarded()) << fn.dump();
        if (choice.is_object()) {
            EXPECT_EQ(name, "get_weather");
        }
        const nlohmann::json& tool = name == "get_weather" ? weather_tool() : other;
        EXPECT_EQ(strata::test::schema_violation(tool["function"]["parameters"], args), "") << fn.dump();
    }
    auto unknown = chat(srv, {{"tools", {weather_tool()}}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}});
    EXPECT_EQ(unknown["http_status"], 400) << unknown.dump();
}

TEST_F(ConstrainedRoutes, AnthropicToolChoiceAnyAndTool) {
    TestServer srv({}, SchedulerOptions{.n_slots = 1, .n_ctx = 512, .n_batch = 64, .max_queue = 16}, builtin_model());
    const nlohmann::json tool = {{"name", "get_weather"}, {"input_schema", weather_tool()["function"]["parameters"]}};
    for (const nlohmann::json& choice : {nlohmann::json{{"type", "any"}}, nlohmann::json{{"type", "tool"}, {"name", "get_weather"}}}) {
        auto c = srv.client();
        const nlohmann::json body = {{"model", "m"}, {"max_tokens", 200}, {"temperature", 0}, {"tools", {tool}}, {"tool_choice", choice},
                                     {"messages", {{{"role", "user"}, {"content", "Weather?"}}}}};
        auto r = post(c, "/v1/messages", body);
        ASSERT_TRUE(r);
        ASSERT_EQ(r->status, 200) << r->body;
        const auto j = nlohmann::json::parse(r->body);
        EXPECT_EQ(j["stop_reason"], "tool_use") << r->body;
        bool found = false;
        for (const auto& block : j["content"]) {
            if (block["type"] != "tool_use") continue;
            found = true;
            EXPECT_EQ(block["name"], "get_weather");
            EXPECT_EQ(strata::test::schema_violation(tool["input_schema"], block["input"]), "") << r->body;
        }
        EXPECT_TRUE(found) << r->body;
    }
}

}  // namespace
}  // namespace strata::server::test
