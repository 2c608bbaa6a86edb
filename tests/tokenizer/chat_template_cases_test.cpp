// Every case of testdata/chat-templates/cases (20 real chat templates x 8 conversations x
// add_generation_prompt), rendered and compared byte for byte with what Python Jinja2 produced
// under transformers' settings; error cases compare str(exception) and where it came from.
// The variables of a case are the conversation's "context", plus its "per_template" entry for
// the template, plus add_generation_prompt (README.md of the data set, section 2).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/file.h"
#include "support/testdata.h"
#include "tokenizer/chat_template/template.h"

namespace strata::chat_template {
namespace {

struct Case {
    std::string template_stem;
    std::string conv;
    int gen = 0;
    std::string file;
    bool expect_error = false;
    bool from_raise_exception = false;
    std::string name;  // gtest-safe
};

const char* kFolder = "chat-templates/cases";

std::vector<Case> load_cases() {
    std::vector<Case> cases;
    auto text = read_file_to_string(test::testdata_path(std::string(kFolder) + "/manifest.json"));
    if (!text) return {Case{"", "", 0, "", false, false, "data_missing"}};
    auto manifest = nlohmann::json::parse(*text);
    for (const auto& c : manifest["cases"]) {
        Case k;
        k.template_stem = c["template"].get<std::string>();
        k.conv = c["conv"].get<std::string>();
        k.gen = c["gen"].get<int>();
        k.file = c["file"].get<std::string>();
        k.expect_error = c["outcome"].get<std::string>() == "error";
        k.from_raise_exception = c.value("error_origin", "") == "raise_exception";
        k.name = k.template_stem + "__" + k.conv + "__gen" + std::to_string(k.gen);
        for (char& ch : k.name) {
            if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
        }
        cases.push_back(k);
    }
    return cases;
}

class ChatTemplateCase : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateCase, RendersLikeJinja2) {
    const Case& c = GetParam();
    std::string manifest_path = test::testdata_path(std::string(kFolder) + "/manifest.json");
    STRATA_SKIP_IF_MISSING(manifest_path);

    auto source = read_file_to_string(test::testdata_path("chat-templates/" + c.template_stem + ".jinja"));
    ASSERT_TRUE(source) << source.status().message();
    auto conv_text = read_file_to_string(test::testdata_path(std::string(kFolder) + "/" + c.conv + ".json"));
    ASSERT_TRUE(conv_text) << conv_text.status().message();
    auto expected = read_file_to_string(test::testdata_path(std::string(kFolder) + "/" + c.file));
    ASSERT_TRUE(expected) << expected.status().message();

    auto conv = nlohmann::ordered_json::parse(*conv_text);
    nlohmann::ordered_json vars = conv["context"];
    for (const auto& [key, value] : conv["per_template"][c.template_stem].items()) vars[key] = value;
    vars["add_generation_prompt"] = c.gen == 1;
    RenderOptions options;
    options.now = conv["strftime_now_fixed_datetime"].get<std::string>();

    auto tmpl = ChatTemplate::parse(*source);
    ASSERT_TRUE(tmpl) << tmpl.status().message();
    auto result = tmpl->render_detailed(vars, options);
    if (c.expect_error) {
        ASSERT_TRUE(std::holds_alternative<TemplateError>(result))
            << "expected an error, rendered:\n" << std::get<std::string>(result);
        const TemplateError& error = std::get<TemplateError>(result);
        EXPECT_EQ(error.message, *expected);
        EXPECT_EQ(error.raised_by_template(), c.from_raise_exception) << error.type << ": " << error.message;
        EXPECT_GT(error.line, 0) << "errors name the template line";
    } else {
        ASSERT_TRUE(std::holds_alternative<std::string>(result))
            << std::get<TemplateError>(result).describe();
        EXPECT_EQ(std::get<std::string>(result), *expected);
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, ChatTemplateCase, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

}  // namespace
}  // namespace strata::chat_template
