// Resource bounds of the template engine (our own policy, not Jinja2's: Python would run these
// for hours or until memory runs out). Templates arrive inside downloaded model files, so a
// broken or hostile one must end in an error, not a hung loader.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tokenizer/chat_template/template.h"

namespace strata::chat_template {
namespace {

std::string render_error(const std::string& source) {
    auto t = ChatTemplate::parse(source);
    if (!t) return t.status().message();
    auto r = t->render(nlohmann::ordered_json::object(), RenderOptions{.now = "2026-01-15T00:00:00"});
    return r ? std::string() : r.status().message();
}

TEST(ChatTemplateLimits, NestedLoopsStopWithAnError) {
    std::string err = render_error("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
    EXPECT_NE(err.find("template too expensive"), std::string::npos) << err;
}

TEST(ChatTemplateLimits, HugeRepetitionStopsWithAnError) {
    std::string err = render_error("{{ 'ab' * 1000000000000 }}");
    EXPECT_NE(err.find("repetition too large"), std::string::npos) << err;
    EXPECT_EQ(render_error("{{ '' * 1000000000000 }}"), "");  // empty result, instantly
}

TEST(ChatTemplateLimits, OrdinaryWorkIsUnaffected) {
    auto t = ChatTemplate::parse("{% for i in range(1000) %}{{ i % 10 }}{% endfor %}");
    ASSERT_TRUE(t);
    auto r = t->render(nlohmann::ordered_json::object(), RenderOptions{});
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->size(), 1000u);
}

}  // namespace
}  // namespace strata::chat_template
