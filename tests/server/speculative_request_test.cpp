// The "speculative" request field: false, true, {"mode", "max"}; refusals name the field; the
// server's settings changed only by what the request chose.
#include <gtest/gtest.h>

#include "server/speculative_request.h"

namespace strata::server {
namespace {

using ojson = nlohmann::ordered_json;

std::optional<SpeculationOptions> chosen(const char* body, const SpeculationOptions& server, std::string* error = nullptr) {
    SpeculativeChoice c;
    if (auto e = parse_speculative(ojson::parse(body), c)) {
        if (error) *error = e->message;
        return SpeculationOptions{.mode = DraftMode::Lookup, .k_max = -1};  // marks a refusal
    }
    return resolve_speculative(c, server);
}

TEST(SpeculativeRequest, ReadsTheChoiceAndKeepsTheServersOtherwise) {
    const SpeculationOptions server{.mode = DraftMode::Auto, .k_max = 4};
    EXPECT_FALSE(chosen("{}", server));
    EXPECT_FALSE(chosen(R"({"speculative": null})", server));
    EXPECT_EQ(chosen(R"({"speculative": false})", server)->mode, DraftMode::None);
    EXPECT_EQ(chosen(R"({"speculative": true})", server)->mode, DraftMode::Auto);
    const auto lookup = chosen(R"({"speculative": {"mode": "lookup", "max": 2}})", server);
    EXPECT_EQ(lookup->mode, DraftMode::Lookup);
    EXPECT_EQ(lookup->k_max, 2);
    // On where the server has it off: true, or only a max, means auto.
    const SpeculationOptions off{.mode = DraftMode::None, .k_max = 4};
    EXPECT_EQ(chosen(R"({"speculative": true})", off)->mode, DraftMode::Auto);
    EXPECT_EQ(chosen(R"({"speculative": {"max": 3}})", off)->mode, DraftMode::Auto);
    EXPECT_EQ(chosen(R"({"speculative": {"max": 3}})", off)->k_max, 3);
}

TEST(SpeculativeRequest, RefusesWhatItCannotRead) {
    const SpeculationOptions server{.mode = DraftMode::Auto, .k_max = 4};
    for (const char* body : {R"({"speculative": 1})", R"({"speculative": "yes"})", R"({"speculative": {"mode": "always"}})",
                             R"({"speculative": {"mode": 3}})", R"({"speculative": {"max": 65}})", R"({"speculative": {"max": -1}})",
                             R"({"speculative": {"depth": 2}})"}) {
        std::string error;
        const auto got = chosen(body, server, &error);
        EXPECT_EQ(got->k_max, -1) << body << " was taken";
        EXPECT_NE(error.find("speculative"), std::string::npos) << body << ": " << error;
    }
}

}  // namespace
}  // namespace strata::server
