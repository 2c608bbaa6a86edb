// Focused semantics of the chat-template engine: whitespace control, loops, scoping, macros,
// filters, tests, Python value formatting, Undefined and error messages. Every expected string
// below is what Python Jinja2 renders in transformers' environment (trim_blocks, lstrip_blocks,
// loopcontrols, ImmutableSandboxedEnvironment, json.dumps tojson, strftime_now fixed at
// 2026-01-15), produced by running each source through that environment.
//
// To add a case: append a row {name, source, expected error type ("" when it renders), expected
// output or str(exception)}. Variables available to every row are in kVariables.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <variant>

#include "tokenizer/chat_template/template.h"

namespace strata::chat_template {
namespace {

const char* kVariables = R"({
  "d": {"a": 1, "b": [2, 3]},
  "msgs": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"},
           {"role": "user", "content": "x"}],
  "none_var": null,
  "s": "héllo wörld"
})";

struct SemanticsCase {
    const char* name;
    const char* source;
    const char* error_type;  // "" when the template renders
    const char* expected;    // the render, or str(exception); "" for syntax errors (wording differs)
};

const SemanticsCase kCases[] = {
    {"TrimBlocksDropsNewlineAfterBlockTag", R"({% if true %}
yes
{% endif %}
end)", "", R"(yes
end)"},
    {"LstripBlocksDropsIndentBeforeBlockTag", R"(  {% if true %}
  x
  {% endif %}
)", "", R"(  x
)"},
    {"LstripBlocksLeavesVariableTagsAlone", R"(  {{ 'a' }}
)", "", R"(  a)"},
    {"MinusStripsAllWhitespaceIncludingNewlines", R"(a  {%- if true -%}  
 b {%- endif %})", "", R"(ab)"},
    {"PlusDisablesLstrip", R"(  {%+ if true %}x{% endif %})", "", R"(  x)"},
    {"CommentsAreTrimmedAndLstripped", R"(a
  {# c #}
b)", "", R"(a
b)"},
    {"OnlyOneTrailingNewlineIsDropped", R"(x

)", "", R"(x
)"},
    {"CarriageReturnsBecomeNewlines", "a\r\nb\rc", "", R"(a
b
c)"},
    {"NoLstripAfterVariableOnSameLine", R"({{ 1 }} {% if true %}x{% endif %})", "", R"(1 x)"},
    {"LoopVariables", R"({% for x in ['a','b','c'] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }};{% endfor %})", "", R"(10TrueFalse33;21FalseFalse32;32FalseTrue31;)"},
    {"LoopPrevitemNextitem", R"({% for x in [1,2,3] %}{{ loop.previtem is defined }}{{ loop.nextitem|default('-') }};{% endfor %})", "", R"(False2;True3;True-;)"},
    {"LoopFilterCountsKeptItemsAndElse", R"({% for x in [1,2,3,4] if x is even %}{{ x }}{{ loop.length }}{% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %})", "", R"(2242|empty)"},
    {"BreakAndContinue", R"({% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %})", "", R"(0134)"},
    {"SetInLoopDoesNotLeak", R"({% set x = 0 %}{% for i in range(3) %}{% set x = x + 1 %}{{ x }}{% endfor %}{{ x }})", "", R"(1110)"},
    {"NamespaceCarriesStateOutOfLoop", R"({% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }})", "", R"(3)"},
    {"TupleUnpackingOverItems", R"({% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k, v in d|items %}{{ k }}{% endfor %})", "", R"(a=1;b=[2, 3];ab)"},
    {"NestedLoopsShadowLoop", R"({% for m in msgs %}{% for c in m.content %}{{ loop.index }}{% endfor %}{{ loop.index }} {% endfor %})", "", R"(121 122 13 )"},
    {"MacroDefaultsAndKeywords", R"({% macro m(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}{{ m() }}|)", "", R"(1B12B|)"},
    {"RecursiveMacro", R"({% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }})", "", R"(120)"},
    {"FilterOnMacroOutput", R"({% macro m() %}  x  {% endmacro %}[{{ m()|trim }}])", "", R"([x])"},
    {"SetInMacroDoesNotLeak", R"({% macro m() %}{% set leaked = 1 %}{% endmacro %}{{ m() }}{{ leaked is defined }})", "", R"(False)"},
    {"BlockSetAndFilterBlock", R"({% set x %}  a {{ 1 + 1 }} {% endset %}[{{ x }}]{% filter upper %}b{{ 'c' }}{% endfilter %})", "", R"([  a 2 ]BC)"},
    {"TojsonMatchesJsonDumps", R"({{ {'a': 'é"
', 'b': [1, 2.0, 1e-07, none, true], 'c': {}, 'e': []}|tojson }})", "", R"({"a": "é\"\n", "b": [1, 2.0, 1e-07, null, true], "c": {}, "e": []})"},
    {"TojsonIndent", R"({{ {'a': [1, {'b': 2}], 'c': {}}|tojson(indent=2) }})", "", R"({
  "a": [
    1,
    {
      "b": 2
    }
  ],
  "c": {}
})"},
    {"TojsonSeparatorsSortKeysEnsureAscii", R"({{ d|tojson(separators=(',', ':')) }}|{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }}|{{ 'é'|tojson(ensure_ascii=true) }})", "", R"({"a":1,"b":[2,3]}|{"a": 2, "b": 1}|"\u00e9")"},
    {"TrimAndLengthCountCodePoints", R"([{{ '  a b 
'|trim }}][{{ 'xxaxx'|trim('x') }}]{{ s|length }}{{ d|length }}{{ nothing|length }})", "", R"([a b][a]1120)"},
    {"JoinAndDefault", R"({{ [1, 2, 3]|join(', ') }}|{{ msgs|join('-', attribute='role') }}|{{ nothing|default('dflt') }}|{{ ''|default('e', true) }}|{{ ''|default('e') }}|)", "", R"(1, 2, 3|user-assistant-user|dflt|e||)"},
    {"SelectattrRejectMap", R"({{ msgs|selectattr('role', 'equalto', 'user')|list|length }}{{ ['a', 'code', 'b']|reject('equalto', 'code')|join }}{{ msgs|map(attribute='content')|join('+') }})", "", R"(2abhi+yo+x)"},
    {"SortByAttributeIgnoresCase", R"({{ [{'t': 'b'}, {'t': 'a'}, {'t': 'C'}]|sort(attribute='t')|map(attribute='t')|join }}{{ [3, 1, 2]|sort(reverse=true)|join }})", "", R"(abC321)"},
    {"CaseStringFirstLast", R"({{ 'AbC'|lower }}{{ 'abc'|upper }}{{ d|string }}{{ [1, 2]|first }}{{ [1, 2]|last }}{{ 3|string ~ 4 }})", "", R"(abcABC{'a': 1, 'b': [2, 3]}1234)"},
    {"MapReturnsGeneratorThatJsonRejects", R"({{ msgs|map(attribute='role')|tojson }})", "TypeError", R"(Object of type generator is not JSON serializable)"},
    {"PrintsPythonRepr", R"({{ [1, 'a', none, true, {'k': "it's"}, ('t',), 'x"y'] }})", "", R"([1, 'a', None, True, {'k': "it's"}, ('t',), 'x"y'])"},
    {"PythonNumberFormattingAndArithmetic", R"({{ 150.0 }} {{ 1/3 }} {{ 0.00001 }} {{ 1e20 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 10 / 2 }} {{ 3 * 'ab' }})", "", R"(150.0 0.3333333333333333 1e-05 1e+20 3 -4 2 1024 5.0 ababab)"},
    {"StringSplitStrip", R"({{ 'a,b,c'.split(',') }}{{ 'a,b,c'.split(',', 1)[-1] }}{{ '  a  b '.split() }}{{ '
x
'.strip('
') }}|{{ 'xab'.lstrip('x') }}{{ 'abx'.rstrip('x') }})", "", R"(['a', 'b', 'c']b,c['a', 'b']x|abab)"},
    {"StringMethodsAndSlicing", R"({{ 'hello'.startswith('he') }}{{ 'hello'.endswith(('x', 'lo')) }}{{ 'a-b-c'.replace('-', '+') }}{{ s[1:4] }}{{ s[::-1] }}{{ s[-1] }}{{ [1,2,3,4][1:-1] }})", "", R"(TrueTruea+b+célldlröw olléhd[2, 3])"},
    {"InOperatorAndDictGet", R"({{ 'ell' in 'hello' }}{{ 'a' in d }}{{ 2 in [1, 2] }}{{ 'z' not in d }}{{ d.get('a') }}{{ d.get('zz', 'no') }}{{ d.get('zz') }})", "", R"(TrueTrueTrueTrue1noNone)"},
    {"ConcatUndefinedInlineIfAndOr", R"({{ 'a' ~ nothing ~ 1 }}[{{ 'x' if false }}]{{ '' or 'd' }} {{ 'a' and 'b' }} {{ 1 < 2 < 3 }}{{ 3 > 2 > 5 }})", "", R"(a1[]d b TrueFalse)"},
    {"EqualityIsPythons", R"({{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }}{{ 1 == 1.0 }}{{ true == 1 }}{{ [1] == [1] }}{{ nothing == nothing2 }}{{ nothing != 1 }})", "", R"(TrueTrueTrueTrueTrueTrue)"},
    {"StringLiteralEscapes", R"({{ 'a\tb\u00e9\x41' }}|{{ "it's" }}|{{ 'multi
line' }})", "", R"(a	béA|it's|multi
line)"},
    {"UndefinedIsLenient", R"([{{ nothing }}]{{ nothing is defined }}{{ nothing is undefined }}{{ nothing is iterable }}{{ not nothing }}{% for x in nothing %}x{% endfor %})", "", R"([]FalseTrueTrueTrue)"},
    {"MissingAttributeIsUndefined", R"({{ 'abc'.content is defined }}[{{ none_var.x }}]{{ msgs[7] is defined }})", "", R"(False[]False)"},
    {"TypeTests", R"({{ d is mapping }}{{ msgs is sequence }}{{ 'x' is string }}{{ 1 is number }}{{ true is number }}{{ none_var is none }}{{ false is false }}{{ 1 is integer }}{{ 1.5 is float }}{{ 3 is odd }}{{ d is iterable }}{{ 5 is iterable }})", "", R"(TrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueFalse)"},
    {"AttributeOfUndefinedRaises", R"({{ nothing.attr }})", "UndefinedError", R"('nothing' is undefined)"},
    {"AttributeOfMissingKeyRaises", R"({{ d.missing.x }})", "UndefinedError", R"('dict object' has no attribute 'missing')"},
    {"ArithmeticOnUndefinedRaises", R"({{ 'a' + nothing }})", "UndefinedError", R"('nothing' is undefined)"},
    {"IndexPastEndThenAttributeRaises", R"({{ msgs[7].role }})", "UndefinedError", R"(list object has no element 7)"},
    {"StrPlusIntRaises", R"({{ 'a' + 1 }})", "TypeError", R"(can only concatenate str (not "int") to str)"},
    {"IntPlusStrRaises", R"({{ 1 + 'a' }})", "TypeError", R"(unsupported operand type(s) for +: 'int' and 'str')"},
    {"StrPlusListRaises", R"({{ 'a' + [1] }})", "TypeError", R"(can only concatenate str (not "list") to str)"},
    {"ListPlusStrRaises", R"({{ [1] + 'a' }})", "TypeError", R"(can only concatenate list (not "str") to list)"},
    {"OrderingMixedTypesRaises", R"({{ 1 < 'a' }})", "TypeError", R"('<' not supported between instances of 'int' and 'str')"},
    {"RaiseExceptionNamesLine", R"(line1
{{ raise_exception('bad thing') }})", "TemplateError", R"(bad thing)"},
    {"IteratingNoneRaises", R"({% for x in none_var %}{% endfor %})", "TypeError", R"('NoneType' object is not iterable)"},
    {"MutatingMethodIsUnsafe", R"({{ d.update({}) }})", "SecurityError", R"(access to attribute 'update' of 'dict' object is unsafe.)"},
    {"UnknownFilterFailsAtParse", R"({{ x | nope }})", "TemplateAssertionError", R"(No filter named 'nope'.)"},
    {"UnknownFilterInUntakenIfIsFine", R"({% if false %}{{ x | nope }}{% endif %}ok)", "", R"(ok)"},
    {"UnknownFilterInTakenIfRaises", R"({% if true %}{{ x | nope }}{% endif %}ok)", "TemplateRuntimeError", R"(No filter named 'nope' found.)"},
    {"UnknownFilterInLoopFailsAtParse", R"({% for x in [1] %}{{ x | nope }}{% endfor %})", "TemplateAssertionError", R"(No filter named 'nope'.)"},
    {"SyntaxErrorNamesLine", R"(a
{% if %})", "TemplateSyntaxError", ""},
    {"MismatchedEndTagNamesLine", R"({% for x in [1] %}
{% endif %})", "TemplateSyntaxError", ""},
    {"StrftimeNowUsesFixedTime", R"({{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d') }})", "", R"(15 Jan 2026|2026-01-15)"},
    {"SetUnpacksTuple", R"({% set a, b = [1, 2] %}{{ b }}{{ a }})", "", R"(21)"},
    {"TuplesPrintAndSerialize", R"({{ (1, 2) }}{{ [(1, 2)]|tojson }})", "", R"((1, 2)[[1, 2]])"},
    {"SetInIfIsVisibleAfter", R"({% set t = 'a' %}{% if true %}{% set t = 'b' %}{% endif %}{{ t }})", "", R"(b)"},
    {"FirstOfSelectattr", R"({{ msgs|selectattr('role', 'equalto', 'user')|first }})", "", R"({'role': 'user', 'content': 'hi'})"},
    {"RangeGlobal", R"({{ range(3)|list }}{{ range(1, 7, 2)|join(',') }})", "", R"([0, 1, 2]1,3,5)"},
    {"PercentFormatting", R"({{ '%s-%d' % ('a', 3) }})", "", R"(a-3)"},
    {"EmptyNamespace", R"({% set n = namespace() %}{% set n.x = 'v' %}{{ n.x }})", "", R"(v)"},
    {"AssignOnNonNamespaceRaises", R"({% set s2 = 'q' %}{% set s2.x = 1 %})", "TemplateRuntimeError", R"(cannot assign attribute on non-namespace object)"},
    {"DivisionByZeroRaises", R"({{ 10 / 0 }})", "ZeroDivisionError", R"(division by zero)"},
    {"IndentSkipsFirstAndBlankLines", R"({{ 'a\nb\n\nc'|indent(2) }}|)", "", "a\n  b\n\n  c|"},
    {"IndentFirstKeepsTrailingNewline", R"({{ 'a\nb\n'|indent(2, true) }}|)", "", "  a\n  b\n|"},
    {"IndentWithStringAndBlank", R"({{ 'a\n\nb'|indent('>', blank=true) }}|)", "", "a\n>\n>b|"},
};

class ChatTemplateSemantics : public ::testing::TestWithParam<SemanticsCase> {};

TEST_P(ChatTemplateSemantics, MatchesJinja2) {
    const SemanticsCase& c = GetParam();
    RenderOptions options;
    options.now = "2026-01-15T00:00:00";
    auto parsed = ChatTemplate::parse_detailed(c.source);
    std::variant<std::string, TemplateError> result;
    if (auto* error = std::get_if<TemplateError>(&parsed)) {
        result = *error;
    } else {
        result = std::get<ChatTemplate>(parsed).render_detailed(nlohmann::ordered_json::parse(kVariables), options);
    }
    if (std::string(c.error_type).empty()) {
        ASSERT_TRUE(std::holds_alternative<std::string>(result)) << std::get<TemplateError>(result).describe();
        EXPECT_EQ(std::get<std::string>(result), c.expected);
        return;
    }
    ASSERT_TRUE(std::holds_alternative<TemplateError>(result)) << "rendered: " << std::get<std::string>(result);
    const TemplateError& error = std::get<TemplateError>(result);
    EXPECT_EQ(error.type, c.error_type) << error.message;
    if (*c.expected) {
        EXPECT_EQ(error.message, c.expected);
    }
    EXPECT_GT(error.line, 0) << "every error names a template line";
}

INSTANTIATE_TEST_SUITE_P(Jinja2, ChatTemplateSemantics, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<SemanticsCase>& case_info) { return case_info.param.name; });

// Errors name the line of the failing expression, counting lines of the source as written.
TEST(ChatTemplateErrors, NameTheTemplateLine) {
    auto tmpl = ChatTemplate::parse("a\n{% if true %}\n  {{ raise_exception('stop') }}\n{% endif %}");
    ASSERT_TRUE(tmpl) << tmpl.status().message();
    auto result = tmpl->render(nlohmann::ordered_json::object(), RenderOptions{});
    ASSERT_FALSE(result);
    EXPECT_EQ(result.status().message(), "chat template line 3: stop");

    auto bad = ChatTemplate::parse("x\ny\n{{ a | no_such_filter }}");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.status().message(), "chat template line 3: No filter named 'no_such_filter'.");
}

// raise_exception is reported as the template's own error; engine errors are not.
TEST(ChatTemplateErrors, DistinguishTemplateRaisedFromEngineErrors) {
    auto raised = ChatTemplate::parse_detailed("{{ raise_exception('roles must alternate') }}");
    auto engine = ChatTemplate::parse_detailed("{{ 'a' + [1] }}");
    auto vars = nlohmann::ordered_json::object();
    auto r1 = std::get<ChatTemplate>(raised).render_detailed(vars, RenderOptions{});
    auto r2 = std::get<ChatTemplate>(engine).render_detailed(vars, RenderOptions{});
    ASSERT_TRUE(std::holds_alternative<TemplateError>(r1));
    ASSERT_TRUE(std::holds_alternative<TemplateError>(r2));
    EXPECT_TRUE(std::get<TemplateError>(r1).raised_by_template());
    EXPECT_FALSE(std::get<TemplateError>(r2).raised_by_template());
    EXPECT_EQ(std::get<TemplateError>(r2).type, "TypeError");
}

// JSON numbers keep their kind: 150.0 stays a float and prints as Python does; key order holds.
TEST(ChatTemplateValues, JsonVariablesKeepPythonTypes) {
    auto tmpl = ChatTemplate::parse("{{ v }}|{{ v|tojson }}|{% for k in v %}{{ k }}{% endfor %}");
    ASSERT_TRUE(tmpl);
    auto vars = nlohmann::ordered_json::parse(R"({"v": {"z": 150.0, "a": 7, "m": [true, null, 0.82, 1e-07]}})");
    auto out = tmpl->render(vars, RenderOptions{});
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_EQ(*out,
              "{'z': 150.0, 'a': 7, 'm': [True, None, 0.82, 1e-07]}|"
              "{\"z\": 150.0, \"a\": 7, \"m\": [true, null, 0.82, 1e-07]}|zam");
}

}  // namespace
}  // namespace strata::chat_template
