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

// Nesting as deep as a template likes would overflow the stack (the fuzzer found a recursive macro
// that did, in a sanitizer build): the parser and the renderer stop with an error instead.
TEST(ChatTemplateLimits, DeepNestingStopsWithAnErrorNotACrash) {
    const int n = 200000;
    const std::string parens = "{{ " + std::string(n, '(') + "1" + std::string(n, ')') + " }}";
    EXPECT_NE(render_error(parens).find("nested too deeply"), std::string::npos);
    std::string nots = "{{ ";
    for (int i = 0; i < n; ++i) nots += "not ";
    EXPECT_NE(render_error(nots + "x }}").find("nested too deeply"), std::string::npos);
    std::string ifs;
    for (int i = 0; i < n / 10; ++i) ifs += "{% if true %}";
    for (int i = 0; i < n / 10; ++i) ifs += "{% endif %}";
    EXPECT_NE(render_error(ifs).find("nested too deeply"), std::string::npos);
    // A macro that calls itself forever ends at the recursion limit or the stack bound, whichever first.
    const std::string err = render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
    EXPECT_NE(err.find("maximum recursion depth exceeded"), std::string::npos) << err;
}

// Inputs the fuzzer found crashing the engine, now errors (or, as in Python, a value).
TEST(ChatTemplateLimits, FuzzerFindingsAreErrors) {
    EXPECT_NE(render_error("{{ 99999999999999999999999 }}").find("does not fit in 64 bits"), std::string::npos);
    EXPECT_EQ(render_error("{{ 1e999 }}"), "");  // inf, as Python
    EXPECT_NE(render_error("{% set ns = namespace(va, ue=0) %}").find("namespace() takes mappings"), std::string::npos);
    EXPECT_NE(render_error("{{ dict(3) }}").find("dict() takes mappings"), std::string::npos);
    EXPECT_EQ(render_error("{{ [[1]] | map(attribute='99999999999999999999999') | list }}"), "");
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
