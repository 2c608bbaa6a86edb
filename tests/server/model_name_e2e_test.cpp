// The "model" field when one model is served: any name is served and echoed (agents send the name
// they were configured with); --strict-model-name refuses another name with 404 in each API's own
// error shape.
#include <gtest/gtest.h>

#include "test_server.h"

namespace strata::server::test {
namespace {

json chat(const std::string& model) {
    return {{"model", model}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}, {"temperature", 0}};
}
json messages(const std::string& model) {
    return {{"model", model}, {"max_tokens", 2}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
}
json responses(const std::string& model) { return {{"model", model}, {"input", "hi"}, {"max_output_tokens", 2}}; }

TEST(ModelName, AnyNameIsServedAndEchoed) {
    TestServer srv({});
    auto c = srv.client();
    auto r = post(c, "/v1/chat/completions", chat("gpt-4o"));
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no reply");
    EXPECT_EQ(json::parse(r->body)["model"], "gpt-4o");
    auto m = post(c, "/v1/messages", messages("claude-sonnet-4-5"));
    ASSERT_TRUE(m && m->status == 200) << (m ? m->body : "no reply");
    EXPECT_EQ(json::parse(m->body)["model"], "claude-sonnet-4-5");
    auto s = post(c, "/v1/responses", responses("gpt-5-codex"));
    ASSERT_TRUE(s && s->status == 200) << (s ? s->body : "no reply");
    EXPECT_EQ(json::parse(s->body)["model"], "gpt-5-codex");
}

TEST(ModelName, StrictRefusesAnotherNameInEachApisShape) {
    ServerOptions o;
    o.strict_model_name = true;
    TestServer srv(o);
    auto c = srv.client();
    auto r = post(c, "/v1/chat/completions", chat("gpt-4o"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    json e = json::parse(r->body)["error"];
    EXPECT_EQ(e["code"], "model_not_found");
    EXPECT_NE(e["message"].get<std::string>().find("'gpt-4o' does not exist"), std::string::npos);

    auto m = post(c, "/v1/messages", messages("claude-sonnet-4-5"));
    ASSERT_TRUE(m);
    EXPECT_EQ(m->status, 404);
    json a = json::parse(m->body);
    EXPECT_EQ(a["type"], "error");
    EXPECT_EQ(a["error"]["type"], "not_found_error");
    EXPECT_NE(a["error"]["message"].get<std::string>().find("'claude-sonnet-4-5' does not exist"), std::string::npos);

    auto s = post(c, "/v1/responses", responses("gpt-5-codex"));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->status, 404);
    EXPECT_EQ(json::parse(s->body)["error"]["code"], "model_not_found");

    // The served name itself still works.
    auto ok = post(c, "/v1/messages", messages("tiny"));
    ASSERT_TRUE(ok && ok->status == 200) << (ok ? ok->body : "no reply");
}

}  // namespace
}  // namespace strata::server::test
