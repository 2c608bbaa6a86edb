// The tool-call / reasoning parser on hand-written model outputs of every family whose template
// is in testdata/chat-templates, written as those templates render an assistant turn.
//
// Every case is checked three ways: the output fed whole, split in two at every byte position,
// and fed one byte at a time. All three must give the same final message, the deltas must add
// up to it, every delta must be valid UTF-8, and (for well-formed outputs) no delta may carry a
// marker or end in the first bytes of one. To add a case, append a Case to the family's list.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/file.h"
#include "support/testdata.h"
#include "tokenizer/tool_calls/tool_call_parser.h"

namespace strata::tool_calls {
namespace {

using Json = nlohmann::ordered_json;

struct ExpectedCall {
    std::string name;
    std::string arguments;  // JSON, compared as a value
    std::string id = {};    // checked when non-empty
};

struct Case {
    std::string name;
    ChatFormat format;
    std::string output;
    std::string content;
    std::string reasoning;
    std::vector<ExpectedCall> calls;
    size_t problems = 0;
    bool forced_open = false;
    bool split_reasoning = true;
    bool with_tools = false;
    bool prose_markers = false;  // marker text the model wrote as prose, where it is no marker
};

// The tools of testdata conversation 05, plus a `days` integer, for schema-typed XML values.
Json weather_tools() {
    return Json::parse(R"([
      {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"location": {"type": "object"}, "unit": {"type": "string"},
                       "include_hourly": {"type": "boolean"}, "days": {"type": "integer"},
                       "ratio": {"type": ["number", "null"]}}}}},
      {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}
    ])");
}

ParserOptions options_for(const Case& c) {
    ParserOptions o;
    o.format = c.format;
    o.thinking_forced_open = c.forced_open;
    o.split_reasoning = c.split_reasoning;
    if (c.with_tools) o.tools = weather_tools();
    o.id_seed = 7;
    return o;
}

bool valid_utf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        }
        i += n;
    }
    return true;
}

// What the client saw: the deltas joined.
struct Stream {
    std::string content, reasoning;
    std::vector<ToolCallDelta> calls;
    void add(const MessageDelta& d) {
        content += d.content;
        reasoning += d.reasoning_content;
        calls.insert(calls.end(), d.tool_calls.begin(), d.tool_calls.end());
    }
};

void check_delta(const Case& c, const MessageDelta& d, bool is_last) {
    EXPECT_TRUE(valid_utf8(d.content)) << c.name;
    EXPECT_TRUE(valid_utf8(d.reasoning_content)) << c.name;
    if (c.problems > 0 || !c.split_reasoning || c.prose_markers) return;  // markers are content there
    for (std::string_view m : format_markers(c.format)) {
        for (const std::string* text : {&d.content, &d.reasoning_content}) {
            EXPECT_EQ(text->find(m), std::string::npos) << c.name << ": delta carries " << m << ": " << *text;
            if (is_last) continue;
            for (size_t len = 1; len < m.size() && len <= text->size(); ++len) {
                EXPECT_NE(text->substr(text->size() - len), m.substr(0, len))
                    << c.name << ": delta ends in the start of " << m << ": " << *text;
            }
        }
    }
}

void expect_same(const ParsedMessage& a, const ParsedMessage& b, const std::string& where) {
    EXPECT_EQ(a.content, b.content) << where;
    EXPECT_EQ(a.reasoning_content, b.reasoning_content) << where;
    ASSERT_EQ(a.tool_calls.size(), b.tool_calls.size()) << where;
    for (size_t i = 0; i < a.tool_calls.size(); ++i) {
        EXPECT_EQ(a.tool_calls[i].id, b.tool_calls[i].id) << where;
        EXPECT_EQ(a.tool_calls[i].name, b.tool_calls[i].name) << where;
        EXPECT_EQ(a.tool_calls[i].arguments, b.tool_calls[i].arguments) << where;
    }
    EXPECT_EQ(a.problems, b.problems) << where;
}

// Feeds `pieces` and checks the deltas against the final message.
ParsedMessage run_pieces(const Case& c, const std::vector<std::string_view>& pieces) {
    ToolCallParser parser(options_for(c));
    Stream seen;
    for (std::string_view p : pieces) {
        MessageDelta d = parser.feed(p);
        check_delta(c, d, false);
        seen.add(d);
    }
    ToolCallParser::Finished done = parser.finish();
    check_delta(c, done.delta, true);
    seen.add(done.delta);
    EXPECT_EQ(seen.content, done.message.content) << c.name;
    EXPECT_EQ(seen.reasoning, done.message.reasoning_content) << c.name;
    EXPECT_EQ(seen.calls.size(), done.message.tool_calls.size()) << c.name;
    for (size_t i = 0; i < seen.calls.size() && i < done.message.tool_calls.size(); ++i) {
        EXPECT_EQ(seen.calls[i].index, static_cast<int>(i)) << c.name;
        EXPECT_EQ(seen.calls[i].arguments, done.message.tool_calls[i].arguments) << c.name;
    }
    return done.message;
}

void run_case(const Case& c) {
    SCOPED_TRACE(c.name);
    ParsedMessage whole = run_pieces(c, {c.output});
    EXPECT_EQ(whole.content, c.content);
    EXPECT_EQ(whole.reasoning_content, c.reasoning);
    ASSERT_EQ(whole.tool_calls.size(), c.calls.size());
    for (size_t i = 0; i < c.calls.size(); ++i) {
        EXPECT_EQ(whole.tool_calls[i].name, c.calls[i].name);
        EXPECT_EQ(nlohmann::json::parse(whole.tool_calls[i].arguments), nlohmann::json::parse(c.calls[i].arguments))
            << whole.tool_calls[i].arguments;
        if (!c.calls[i].id.empty()) {
            EXPECT_EQ(whole.tool_calls[i].id, c.calls[i].id);
        }
    }
    EXPECT_EQ(whole.problems.size(), c.problems) << (whole.problems.empty() ? "" : whole.problems[0]);

    std::string_view out = c.output;
    for (size_t cut = 0; cut <= out.size(); ++cut) {
        expect_same(run_pieces(c, {out.substr(0, cut), out.substr(cut)}), whole, c.name + " cut at " + std::to_string(cut));
    }
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < out.size(); ++i) bytes.push_back(out.substr(i, 1));
    expect_same(run_pieces(c, bytes), whole, c.name + " byte by byte");
}

const char* kWeatherArgs = R"({"location": {"city": "東京", "country_code": "JP"}, "unit": "celsius"})";

TEST(ToolCallParser, HermesQwen3) {
    const ChatFormat f = ChatFormat::Hermes;
    std::vector<Case> cases = {
        {"plain", f, "Hello there! 👋", "Hello there! 👋", "", {}},
        {"reasoning", f, "<think>\nLet me add.\n2 + 2 = 4\n</think>\n\nThe answer is 4.", "The answer is 4.",
         "Let me add.\n2 + 2 = 4", {}},
        {"forced open (QwQ prompt ends with <think>)", f, "Let me add.\n</think>\n\nIt is 4.", "It is 4.",
         "Let me add.", {}, 0, /*forced_open=*/true},
        {"one call", f,
         "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + std::string(kWeatherArgs) + "}\n</tool_call>", "",
         "", {{"get_weather", kWeatherArgs}}},
        {"content, then two calls with nested JSON, escapes and unicode", f,
         R"X(Let me check both.
<tool_call>
{"name": "get_weather", "arguments": {"location": {"city": "Zürich"}, "days": [1, {"n": 2}]}}
</tool_call>
<tool_call>
{"name": "write_file", "arguments": {"path": "a \"b\".txt", "content": "line1\nline2 \u00e9 😀 </tool"}}
</tool_call>)X",
         "Let me check both.", "",
         {{"get_weather", R"({"location": {"city": "Zürich"}, "days": [1, {"n": 2}]})"},
          {"write_file", R"({"path": "a \"b\".txt", "content": "line1\nline2 é 😀 </tool"})"}}},
        {"reasoning then call", f,
         "<think>\nNeed the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>",
         "", "Need the weather.", {{"get_weather", "{}"}}},
        {"arguments as a JSON string", f,
         R"(<tool_call>{"name": "get_weather", "arguments": "{\"unit\": \"celsius\"}"}</tool_call>)", "", "",
         {{"get_weather", R"({"unit": "celsius"})"}}},
        {"malformed JSON", f, "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": }\n</tool_call>",
         "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": }\n</tool_call>", "", {}, 1},
        {"call never closed", f, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"c\"", 
         "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"c\"", "", {}, 1},
        {"marker-like text that is not a marker", f, "Use <tool> or a <think> tag.", "Use <tool> or a <think> tag.",
         "", {}, 0, false, true, false, /*prose_markers=*/true},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, Qwen3CoderXml) {
    const ChatFormat f = ChatFormat::Qwen3Coder;
    const std::string call =
        "<tool_call>\n<function=get_weather>\n<parameter=location>\n{\"city\": \"東京\", \"country_code\": \"JP\"}\n"
        "</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n<parameter=include_hourly>\nFalse\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n<parameter=ratio>\n0.5\n</parameter>\n</function>\n</tool_call>";
    Case typed{"values converted by schema", f, call, "", "",
               {{"get_weather", R"({"location": {"city": "東京", "country_code": "JP"}, "unit": "celsius",
                                   "include_hourly": false, "days": 3, "ratio": 0.5})"}}};
    typed.with_tools = true;
    Case untyped{"no schema: values stay strings", f, call, "", "",
                 {{"get_weather", R"({"location": "{\"city\": \"東京\", \"country_code\": \"JP\"}", "unit": "celsius",
                                     "include_hourly": "False", "days": "3", "ratio": "0.5"})"}}};
    Case multi{"content then two calls, multi-line string with quotes", f,
               "I'll write it.\n\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/a.py\n</parameter>\n"
               "<parameter=content>\ndef f():\n    return \"x\" < 3\n</parameter>\n</function>\n</tool_call>\n"
               "<tool_call>\n<function=get_weather>\n<parameter=days>\nmany\n</parameter>\n</function>\n</tool_call>",
               "I'll write it.", "",
               {{"write_file", R"({"path": "src/a.py", "content": "def f():\n    return \"x\" < 3"})"},
                {"get_weather", R"({"days": "many"})"}},
               1};  // "many" is not an integer: passed as a string, noted
    multi.with_tools = true;
    Case qwen35{"Qwen3.5: forced-open reasoning then a call", f,
                "The user wants weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=unit>\ncelsius\n"
                "</parameter>\n</function>\n</tool_call>",
                "", "The user wants weather.", {{"get_weather", R"({"unit": "celsius"})"}}, 0, true};
    Case bad{"no function name", f, "<tool_call>\n{\"oops\": 1}\n</tool_call>",
             "<tool_call>\n{\"oops\": 1}\n</tool_call>", "", {}, 1};
    for (const Case& c : {typed, untyped, multi, qwen35, bad}) run_case(c);
}

TEST(ToolCallParser, DeepSeek) {
    std::vector<Case> cases = {
        {"R1: forced-open reasoning, content, two fenced calls", ChatFormat::DeepSeekR1,
         "Check weather and time.\n</think>\n\nOn it.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
         "get_weather\n```json\n{\"location\": {\"city\": \"東京\"}, \"note\": \"say \\\"hi\\\"\"}\n```<｜tool▁call▁end｜>\n"
         "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
         "On it.", "Check weather and time.",
         {{"get_weather", R"({"location": {"city": "東京"}, "note": "say \"hi\""})"}, {"get_time", "{}"}}, 0, true},
        {"R1: plain answer after reasoning", ChatFormat::DeepSeekR1, "<think>\nHmm.\n</think>\n\n42", "42", "Hmm.", {}},
        {"R1: malformed JSON", ChatFormat::DeepSeekR1,
         "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": [}\n```<｜tool▁call▁end｜>"
         "<｜tool▁calls▁end｜>",
         "<｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": [}\n```<｜tool▁call▁end｜>", "", {}, 1},
        {"V3.1 non-thinking: content then calls", ChatFormat::DeepSeekV31,
         "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>" + std::string(kWeatherArgs) +
             "<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"tz\": \"UTC\"}<｜tool▁call▁end｜>"
             "<｜tool▁calls▁end｜>",
         "Sure.", "", {{"get_weather", kWeatherArgs}, {"get_time", R"({"tz": "UTC"})"}}},
        {"V3.1 thinking (prompt ends with <think>)", ChatFormat::DeepSeekV31,
         "Weather needed.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{}"
         "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
         "", "Weather needed.", {{"get_weather", "{}"}}, 0, true},
        {"V3.2 DSML with typed parameters", ChatFormat::DeepSeekV32,
         "Let me look.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter "
         "name=\"location\" string=\"false\">{\"city\": \"東京\", \"country_code\": \"JP\"}</｜DSML｜parameter>\n"
         "<｜DSML｜parameter name=\"unit\" string=\"true\">celsius</｜DSML｜parameter>\n<｜DSML｜parameter "
         "name=\"include_hourly\" string=\"false\">false</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
         "<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
         "Let me look.", "",
         {{"get_weather", R"({"location": {"city": "東京", "country_code": "JP"}, "unit": "celsius",
                             "include_hourly": false})"},
          {"get_time", "{}"}}},
        {"V3.2 reasoning then answer", ChatFormat::DeepSeekV32, "Easy.</think>4", "4", "Easy.", {}, 0, true},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, Llama3) {
    const ChatFormat f = ChatFormat::Llama3;
    std::vector<Case> cases = {
        {"plain", f, "The capital of France is Paris.", "The capital of France is Paris.", "", {}},
        {"bare JSON call", f, R"({"name": "get_weather", "parameters": {"location": {"city": "東京"}, "q": "a \"b\""}})",
         "", "", {{"get_weather", R"({"location": {"city": "東京"}, "q": "a \"b\""})"}}},
        {"two calls separated by ';'", f,
         R"({"name": "get_weather", "parameters": {"unit": "celsius"}}; {"name": "get_time", "parameters": {}})", "", "",
         {{"get_weather", R"({"unit": "celsius"})"}, {"get_time", "{}"}}},
        {"a JSON answer is content", f, R"({"answer": 42, "unit": "none"})", R"({"answer": 42, "unit": "none"})", "", {}},
        {"built-in tool", f, R"(<|python_tag|>brave_search.call(query="weather in \"SF\"", count=3))", "", "",
         {{"brave_search", R"({"query": "weather in \"SF\"", "count": 3})"}}},
        {"code interpreter", f, "<|python_tag|>print(sum([1, 2]))", "", "",
         {{"python", R"X({"code": "print(sum([1, 2]))"})X"}}},
        {"malformed call", f, R"({"name": "get_weather", "parameters": {"unit": "celsius")",
         R"({"name": "get_weather", "parameters": {"unit": "celsius")", "", {}, 1},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, FireFunctionV2) {
    const ChatFormat f = ChatFormat::FireFunctionV2;
    std::vector<Case> cases = {
        {"content then calls", f,
         R"(Checking. functools[{"name": "get_weather", "arguments": {"location": {"city": "東京"}}}, {"name": "get_time", "arguments": {}}])",
         "Checking.", "", {{"get_weather", R"({"location": {"city": "東京"}})"}, {"get_time", "{}"}}},
        {"the word in prose", f, "Python's functools module is useful.", "Python's functools module is useful.", "", {},
         0, false, true, false, /*prose_markers=*/true},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, Mistral) {
    std::vector<Case> cases = {
        {"Nemo: JSON array with ids", ChatFormat::MistralNemo,
         R"([TOOL_CALLS][{"name": "get_weather", "arguments": {"location": {"city": "東京"}}, "id": "Xk3P9qL2m"}, {"name": "get_time", "arguments": {}, "id": "Ab3P9qL2m"}])",
         "", "", {{"get_weather", R"({"location": {"city": "東京"}})", "Xk3P9qL2m"}, {"get_time", "{}", "Ab3P9qL2m"}}},
        {"Devstral: name[ARGS], two calls after content", ChatFormat::Mistral,
         R"(Let me see.[TOOL_CALLS]get_weather[ARGS]{"q": "a \"quoted\" [x] {y}", "n": [1, {"m": 2}]}[TOOL_CALLS]get_time[ARGS]{})",
         "Let me see.", "", {{"get_weather", R"({"q": "a \"quoted\" [x] {y}", "n": [1, {"m": 2}]})"}, {"get_time", "{}"}}},
        {"Small 3.2: [CALL_ID]", ChatFormat::Mistral,
         "[TOOL_CALLS]get_weather[CALL_ID]Xk3P9qL2m[ARGS]" + std::string(kWeatherArgs), "", "",
         {{"get_weather", kWeatherArgs, "Xk3P9qL2m"}}},
        {"Ministral: [THINK] then answer", ChatFormat::Mistral, "[THINK]Simple sum.[/THINK]17 + 25 = 42.", "17 + 25 = 42.",
         "Simple sum.", {}},
        {"unterminated arguments", ChatFormat::Mistral, R"([TOOL_CALLS]get_weather[ARGS]{"unit": "c)",
         R"([TOOL_CALLS]get_weather[ARGS]{"unit": "c)", "", {}, 1},
        {"arguments that are not JSON", ChatFormat::Mistral, "[TOOL_CALLS]get_weather[ARGS]sunny please",
         "[TOOL_CALLS]get_weather[ARGS]sunny please", "", {}, 1},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, GptOssHarmony) {
    const ChatFormat f = ChatFormat::GptOss;
    std::vector<Case> cases = {
        {"analysis then call", f,
         "<|channel|>analysis<|message|>User wants weather in 東京.<|end|><|start|>assistant<|channel|>commentary "
         "to=functions.get_weather <|constrain|>json<|message|>" + std::string(kWeatherArgs) + "<|call|>",
         "", "User wants weather in 東京.", {{"get_weather", kWeatherArgs}}},
        {"recipient before the channel, no <|call|> (server stopped on it)", f,
         "<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant to=functions.get_time<|channel|>commentary "
         "json<|message|>{\"tz\": \"a \\\"b\\\"\"}",
         "", "Need it.", {{"get_time", R"({"tz": "a \"b\""})"}}},
        {"analysis then final", f,
         "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>17 + 25 = 42.<|return|>",
         "17 + 25 = 42.", "Simple.", {}},
        {"preamble, then call", f,
         "<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant<|channel|>commentary "
         "to=functions.get_weather <|constrain|>json<|message|>{}<|call|>",
         "Checking now.", "", {{"get_weather", "{}"}}},
        {"plain text without channels", f, "Hello!", "Hello!", "", {}},
        {"malformed arguments", f,
         "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"unit\": <|call|>",
         "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"unit\": <|call|>", "", {}, 1},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, Glm45) {
    const ChatFormat f = ChatFormat::Glm45;
    Case typed{"reasoning then call, typed by schema", f,
               "\n<think>Need the weather.</think>\n<tool_call>get_weather\n<arg_key>location</arg_key>\n"
               "<arg_value>{\"city\": \"東京\", \"country_code\": \"JP\"}</arg_value>\n<arg_key>unit</arg_key>\n"
               "<arg_value>celsius</arg_value>\n<arg_key>include_hourly</arg_key>\n<arg_value>false</arg_value>\n"
               "</tool_call>",
               "", "Need the weather.",
               {{"get_weather", R"({"location": {"city": "東京", "country_code": "JP"}, "unit": "celsius",
                                   "include_hourly": false})"}}};
    typed.with_tools = true;
    std::vector<Case> cases = {
        typed,
        {"untyped values: JSON when it parses", f,
         "Checking.\n<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>a \"b\".txt</arg_value>\n"
         "<arg_key>n</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_time\n</tool_call>",
         "Checking.", "", {{"write_file", R"({"path": "a \"b\".txt", "n": 3})"}, {"get_time", "{}"}}},
        {"empty reasoning then answer", f, "\n<think></think>\n42", "42", "", {}},
        {"key without value", f, "<tool_call>get_weather\n<arg_key>unit</arg_key>\n</tool_call>",
         "<tool_call>get_weather\n<arg_key>unit</arg_key>\n</tool_call>", "", {}, 1},
    };
    for (const Case& c : cases) run_case(c);
}

TEST(ToolCallParser, ReasoningKeptInContent) {
    Case hermes{"hermes", ChatFormat::Hermes, "<think>\nA\n</think>\n\nB", "<think>\nA\n</think>\n\nB", "", {}};
    hermes.split_reasoning = false;
    Case forced{"forced open gets its tag back", ChatFormat::DeepSeekR1, "A\n</think>\n\nB", "<think>A\n</think>\n\nB",
                "", {}};
    forced.split_reasoning = false;
    forced.forced_open = true;
    Case harmony{"gpt-oss analysis wrapped in think tags", ChatFormat::GptOss,
                 "<|channel|>analysis<|message|>A<|end|><|start|>assistant<|channel|>final<|message|>B",
                 "<think>A</think>B", "", {}};
    harmony.split_reasoning = false;
    for (const Case& c : {hermes, forced, harmony}) run_case(c);
}

TEST(ToolCallParser, GenericSplitsLeadingThink) {
    run_case({"generic", ChatFormat::Generic, "<think>x</think> y <tool_call>{}</tool_call>", "y <tool_call>{}</tool_call>",
              "x", {}, 0, false, true, false, /*prose_markers=*/true});
}

TEST(ToolCallParser, CallMarkersAreContentWithoutTools) {
    ParserOptions o;
    o.format = ChatFormat::Hermes;
    o.parse_tool_calls = false;
    ParsedMessage m = ToolCallParser::parse("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", o);
    EXPECT_TRUE(m.tool_calls.empty());
    EXPECT_EQ(m.content, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>");
}

TEST(ToolCallParser, IdsAreDeterministicPerSeed) {
    std::string out = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"b\"}</tool_call>";
    ParserOptions o;
    o.format = ChatFormat::Hermes;
    o.id_seed = 42;
    ParsedMessage m1 = ToolCallParser::parse(out, o);
    ParsedMessage m2 = ToolCallParser::parse(out, o);
    o.id_seed = 43;
    ParsedMessage m3 = ToolCallParser::parse(out, o);
    ASSERT_EQ(m1.tool_calls.size(), 2u);
    EXPECT_EQ(m1.tool_calls[0].id, m2.tool_calls[0].id);
    EXPECT_NE(m1.tool_calls[0].id, m1.tool_calls[1].id);
    EXPECT_NE(m1.tool_calls[0].id, m3.tool_calls[0].id);
    EXPECT_EQ(m1.tool_calls[0].id.rfind("call_", 0), 0u);
    EXPECT_EQ(m1.tool_calls[0].id.size(), 29u);
    EXPECT_EQ(m1.tool_calls[1].arguments, "{}");  // a call without arguments has empty ones

    // Mistral templates reject any id that is not 9 alphanumerics.
    o.format = ChatFormat::Mistral;
    ParsedMessage mm = ToolCallParser::parse("[TOOL_CALLS]a[ARGS]{}", o);
    ASSERT_EQ(mm.tool_calls.size(), 1u);
    EXPECT_EQ(mm.tool_calls[0].id.size(), 9u);
    for (char c : mm.tool_calls[0].id) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)));
}

TEST(ToolCallParser, HoldsBackOnlyWhatCouldBeAMarker) {
    ParserOptions o;
    o.format = ChatFormat::Hermes;
    ToolCallParser p(o);
    EXPECT_EQ(p.feed("Hello <tool").content, "Hello");  // the space waits for what follows it
    EXPECT_EQ(p.feed("box> ok").content, " <toolbox> ok");
    EXPECT_EQ(p.feed("\xE6\x9D").content, "");  // half of 東
    EXPECT_EQ(p.feed("\xB1").content, "東");
    EXPECT_EQ(p.finish().message.content, "Hello <toolbox> ok東");
}

TEST(ToolCallParser, FeedAfterFinishIsIgnored) {
    ToolCallParser p(ParserOptions{});
    p.feed("a");
    EXPECT_EQ(p.finish().message.content, "a");
    EXPECT_TRUE(p.feed("b").empty());
    EXPECT_EQ(p.finish().message.content, "a");
}

// Random soups of markers, JSON punctuation and text, for every format: nothing throws, the
// deltas add up to the message, and feeding byte by byte gives what feeding whole gives.
TEST(ToolCallParser, MarkerSoupIsSplitInvariant) {
    const std::vector<ChatFormat> formats = {
        ChatFormat::Generic,     ChatFormat::Hermes,      ChatFormat::Qwen3Coder, ChatFormat::DeepSeekR1,
        ChatFormat::DeepSeekV31, ChatFormat::DeepSeekV32, ChatFormat::Llama3,     ChatFormat::FireFunctionV2,
        ChatFormat::MistralNemo, ChatFormat::Mistral,     ChatFormat::GptOss,     ChatFormat::Glm45};
    const std::vector<std::string> words = {"{", "}", "[", "]", "\"", "\\", ":", ",", " ", "\n", "x", "東",
                                            "{\"name\": \"f\", \"arguments\": {}}", "[ARGS]", "<function=f>",
                                            "<parameter=p>", "</parameter>", "<arg_key>k</arg_key>", "name=\"f\">",
                                            "to=functions.f", "analysis", "final", "function<｜tool▁sep｜>"};
    uint64_t rng = 12345;
    auto next = [&rng](size_t n) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<size_t>((rng >> 33) % n);
    };
    for (ChatFormat f : formats) {
        std::vector<std::string_view> markers = format_markers(f);
        for (int round = 0; round < 40; ++round) {
            std::string out;
            for (int k = 0; k < 30; ++k) {
                out += next(3) == 0 ? std::string(markers[next(markers.size())]) : words[next(words.size())];
            }
            Case c{std::string(chat_format_name(f)) + " soup " + std::to_string(round), f, out, "", "", {}};
            c.prose_markers = true;  // marker text in a soup is often legitimately content
            c.forced_open = round % 4 == 1;
            c.with_tools = round % 2 == 0;
            ParsedMessage whole = run_pieces(c, {out});
            std::vector<std::string_view> bytes;
            for (size_t i = 0; i < out.size(); ++i) bytes.push_back(std::string_view(out).substr(i, 1));
            expect_same(run_pieces(c, bytes), whole, c.name + ": " + out);
            size_t cut = next(out.size() + 1);
            expect_same(run_pieces(c, {std::string_view(out).substr(0, cut), std::string_view(out).substr(cut)}), whole,
                        c.name + ": " + out);
        }
    }
}

TEST(ChatFormatDetection, PromptOpensThinking) {
    EXPECT_TRUE(prompt_opens_thinking(ChatFormat::Qwen3Coder, "<|im_start|>assistant\n<think>\n"));
    EXPECT_FALSE(prompt_opens_thinking(ChatFormat::Hermes, "<|im_start|>assistant\n<think>\n\n</think>\n\n"));
    EXPECT_TRUE(prompt_opens_thinking(ChatFormat::DeepSeekV31, "<｜Assistant｜><think>"));
    EXPECT_FALSE(prompt_opens_thinking(ChatFormat::DeepSeekV31, "<｜Assistant｜><think></think>"));
    EXPECT_FALSE(prompt_opens_thinking(ChatFormat::Llama3, "<think>"));
}

TEST(ChatFormatDetection, EveryTemplateInTestdata) {
    const std::map<std::string, ChatFormat> expected = {
        {"GLM-4.6", ChatFormat::Glm45},
        {"Mistral-Small-3.2-24B-Instruct-2506", ChatFormat::Mistral},
        {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", ChatFormat::Hermes},
        {"Qwen-QwQ-32B", ChatFormat::Hermes},
        {"Qwen-Qwen3-0.6B", ChatFormat::Hermes},
        {"Qwen3-Coder", ChatFormat::Qwen3Coder},
        {"Qwen3.5-4B", ChatFormat::Qwen3Coder},
        {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B", ChatFormat::DeepSeekR1},
        {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", ChatFormat::DeepSeekR1},
        {"deepseek-ai-DeepSeek-V3.1", ChatFormat::DeepSeekV31},
        {"deepseek-ai-DeepSeek-V3.2", ChatFormat::DeepSeekV32},
        {"fireworks-ai-llama-3-firefunction-v2", ChatFormat::FireFunctionV2},
        {"llama-cpp-deepseek-r1", ChatFormat::DeepSeekR1},
        {"meta-llama-Llama-3.1-8B-Instruct", ChatFormat::Llama3},
        {"meta-llama-Llama-3.2-3B-Instruct", ChatFormat::Llama3},
        {"meta-llama-Llama-3.3-70B-Instruct", ChatFormat::Llama3},
        {"mistralai-Ministral-3-14B-Reasoning-2512", ChatFormat::Mistral},
        {"mistralai-Mistral-Nemo-Instruct-2407", ChatFormat::MistralNemo},
        {"openai-gpt-oss-120b", ChatFormat::GptOss},
        {"unsloth-mistral-Devstral-Small-2507", ChatFormat::Mistral},
    };
    std::vector<std::string> files = test::testdata_files("chat-templates", ".jinja");
    if (files.empty()) GTEST_SKIP() << "test data missing: " << test::testdata_path("chat-templates");
    for (const std::string& path : files) {
        std::string stem = std::filesystem::path(path).stem().string();
        auto it = expected.find(stem);
        ASSERT_NE(it, expected.end()) << "new template " << stem << ": add its expected format here";
        Result<std::string> source = read_file_to_string(path);
        ASSERT_TRUE(source.is_ok()) << source.status().message();
        EXPECT_EQ(chat_format_name(detect_chat_format(*source)), chat_format_name(it->second)) << stem;
    }
    EXPECT_EQ(files.size(), expected.size());
    EXPECT_EQ(detect_chat_format("{{ messages }}"), ChatFormat::Generic);
}

}  // namespace
}  // namespace strata::tool_calls
