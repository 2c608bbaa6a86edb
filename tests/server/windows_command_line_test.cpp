// Windows command lines (server/windows_command_line.h) against the parsing rules Microsoft
// documents for CommandLineToArgvW and the C runtime ("Parsing C++ command-line arguments"): the
// documented examples, and round trips of awkward arguments through a parser written from those
// rules; under Windows (Wine in CI) through CommandLineToArgvW itself.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "server/windows_command_line.h"

#ifdef _WIN32
#include <windows.h>
#include <shellapi.h>
#endif

namespace strata::server {
namespace {

// The documented rules, for arguments after the program name: whitespace separates arguments
// outside quotes; 2n backslashes then a quote give n backslashes and open or close quoting; 2n+1
// backslashes then a quote give n backslashes and a literal quote; other backslashes are literal.
std::vector<std::string> parse_by_the_rules(const std::string& line) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        if (i >= line.size()) break;
        std::string arg;
        bool quoted = false;
        for (; i < line.size(); ++i) {
            const char c = line[i];
            if (!quoted && (c == ' ' || c == '\t')) break;
            if (c == '\\') {
                size_t n = 0;
                while (i < line.size() && line[i] == '\\') ++n, ++i;
                if (i < line.size() && line[i] == '"') {
                    arg.append(n / 2, '\\');
                    if (n % 2 == 1) arg.push_back('"');
                    else quoted = !quoted;
                } else {
                    arg.append(n, '\\');
                    --i;
                }
                continue;
            }
            if (c == '"') {
                quoted = !quoted;
                continue;
            }
            arg.push_back(c);
        }
        out.push_back(arg);
    }
    return out;
}

TEST(WindowsCommandLine, TheDocumentedExamplesParseAsDocumented) {
    // The table's inputs and outputs; checks the test's parser before it judges the quoting.
    EXPECT_EQ(parse_by_the_rules(R"("a b c" d e)"), (std::vector<std::string>{"a b c", "d", "e"}));
    EXPECT_EQ(parse_by_the_rules(R"("ab\"c" "\\" d)"), (std::vector<std::string>{"ab\"c", "\\", "d"}));
    EXPECT_EQ(parse_by_the_rules(R"(a\\\b d"e f"g h)"), (std::vector<std::string>{R"(a\\\b)", "de fg", "h"}));
    EXPECT_EQ(parse_by_the_rules(R"(a\\\"b c d)"), (std::vector<std::string>{R"(a\"b)", "c", "d"}));
    EXPECT_EQ(parse_by_the_rules(R"(a\\\\"b c" d e)"), (std::vector<std::string>{R"(a\\b c)", "d", "e"}));
}

TEST(WindowsCommandLine, QuotesOnlyWhatNeedsIt) {
    EXPECT_EQ(windows_command_line({"strata.exe", "serve", "--port", "0"}), "strata.exe serve --port 0");
    EXPECT_EQ(quote_windows_argument("C:\\Program Files\\Strata\\strata.exe"), "\"C:\\Program Files\\Strata\\strata.exe\"");
    EXPECT_EQ(quote_windows_argument(""), "\"\"");
    EXPECT_EQ(quote_windows_argument("C:\\models\\"), "C:\\models\\");          // no quote: backslashes stay
    EXPECT_EQ(quote_windows_argument("C:\\my models\\"), "\"C:\\my models\\\\\"");  // doubled before the closing quote
    EXPECT_EQ(quote_windows_argument("say \"hi\""), "\"say \\\"hi\\\"\"");
    EXPECT_EQ(quote_windows_argument("a\\\"b"), "\"a\\\\\\\"b\"");
}

std::vector<std::string> round_trip(const std::vector<std::string>& args) {
    std::vector<std::string> with_program = {"C:\\Program Files\\strata.exe"};
    with_program.insert(with_program.end(), args.begin(), args.end());
    const std::string line = windows_command_line(with_program);
#ifdef _WIN32
    const int wide_n = MultiByteToWideChar(CP_UTF8, 0, line.c_str(), -1, nullptr, 0);
    std::wstring wide(static_cast<size_t>(wide_n), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, line.c_str(), -1, wide.data(), wide_n);
    int count = 0;
    LPWSTR* parsed = CommandLineToArgvW(wide.c_str(), &count);
    std::vector<std::string> out;
    for (int i = 1; parsed && i < count; ++i) {
        const int n = WideCharToMultiByte(CP_UTF8, 0, parsed[i], -1, nullptr, 0, nullptr, nullptr);
        std::string s(static_cast<size_t>(n > 0 ? n - 1 : 0), '\0');
        if (n > 1) WideCharToMultiByte(CP_UTF8, 0, parsed[i], -1, s.data(), n, nullptr, nullptr);
        out.push_back(s);
    }
    if (parsed) LocalFree(parsed);
    EXPECT_EQ(count, static_cast<int>(args.size()) + 1) << line;
    return out;
#else
    std::vector<std::string> out = parse_by_the_rules(line.substr(quote_windows_argument(with_program[0]).size()));
    return out;
#endif
}

TEST(WindowsCommandLine, AwkwardArgumentsComeBackExactly) {
    const std::vector<std::string> args = {"", " ", "\"", "\\", "\\\\", "\\\"", "a\\\\\"b", "C:\\dir with space\\", "tab\there",
                                           "end\\", "\"quoted\"", "ünïcödé 模型", "--engine-report-fd", "1234"};
    EXPECT_EQ(round_trip(args), args);
}

TEST(WindowsCommandLine, RandomArgumentsComeBackExactly) {
    std::mt19937 rng(7);
    const std::string alphabet = "ab \\\"\t-=:";
    for (int trial = 0; trial < 300; ++trial) {
        std::vector<std::string> args(1 + rng() % 4);
        for (std::string& a : args) {
            a.resize(rng() % 9);
            for (char& c : a) c = alphabet[rng() % alphabet.size()];
        }
        ASSERT_EQ(round_trip(args), args) << windows_command_line(args);
    }
}

}  // namespace
}  // namespace strata::server
