// Tokenizers against the reference tokenizations of llama.cpp's vocab test set
// (testdata/vocab/ggml-vocab-*.gguf with .inp/.out; format in testdata/PROVENANCE.md): the ids are
// what each model's Hugging Face tokenizer returns, without special tokens. Also: decode
// round trips, special-token parsing on and off, BOS, and the word cache.
//
// To add a vocabulary: drop ggml-vocab-<name>.gguf (+ .inp/.out) into testdata/vocab.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/file.h"
#include "gguf/reader.h"
#include "support/testdata.h"
#include "tokenizer/encoders.h"
#include "tokenizer/tokenizer.h"

namespace strata {
namespace {

constexpr std::string_view kSeparator = "\n__ggml_vocab_test__\n";

std::vector<std::string> parse_inputs(const std::string& data) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < data.size()) {
        const size_t sep = data.find(kSeparator, pos);
        if (sep == std::string::npos) break;  // the file ends with the separator
        out.push_back(data.substr(pos, sep - pos));
        pos = sep + kSeparator.size();
    }
    return out;
}

std::vector<std::vector<int32_t>> parse_outputs(const std::string& data) {
    std::vector<std::vector<int32_t>> out;
    size_t pos = 0;
    while (pos < data.size()) {
        size_t end = data.find('\n', pos);
        if (end == std::string::npos) end = data.size();
        std::string line = data.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.pop_back();  // tolerate CR LF files
        std::vector<int32_t> ids;
        size_t i = 0;
        while (i < line.size()) {
            while (i < line.size() && line[i] == ' ') ++i;
            size_t j = i;
            while (j < line.size() && line[j] != ' ') ++j;
            if (j > i) ids.push_back(int32_t(std::stol(line.substr(i, j - i))));
            i = j;
        }
        out.push_back(std::move(ids));
        pos = end + 1;
    }
    return out;
}

std::string show_ids(const std::vector<int32_t>& ids) {
    return fmt::format("[{}]", fmt::join(ids, " "));
}

std::string escaped(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else out += c;
    }
    return out;
}

Tokenizer load(const std::string& path, const TokenizerOptions& options = {}) {
    auto gguf = GgufFile::open(path);
    EXPECT_TRUE(gguf.is_ok()) << gguf.status().message();
    auto tok = Tokenizer::from_gguf(*gguf, options);
    EXPECT_TRUE(tok.is_ok()) << tok.status().message();
    return std::move(*tok);
}

// Vocabularies with a reference tokenization.
std::vector<std::string> reference_vocabs() {
    std::vector<std::string> out;
    for (const auto& path : test::testdata_files("vocab", ".gguf")) {
        if (file_exists(path + ".inp") && file_exists(path + ".out")) out.push_back(path);
    }
    return out;
}

std::string vocab_test_name(const testing::TestParamInfo<std::string>& info) {
    std::string stem = std::filesystem::path(info.param).stem().string();  // ggml-vocab-gpt-2
    if (stem.rfind("ggml-vocab-", 0) == 0) stem = stem.substr(11);
    std::replace_if(stem.begin(), stem.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    return stem;
}

class VocabReference : public testing::TestWithParam<std::string> {};

TEST_P(VocabReference, EveryStringGivesTheExpectedIds) {
    const std::string& path = GetParam();
    Tokenizer tok = load(path);
    auto inp = read_file_to_string(path + ".inp");
    auto outp = read_file_to_string(path + ".out");
    ASSERT_TRUE(inp.is_ok() && outp.is_ok());
    const auto inputs = parse_inputs(*inp);
    const auto expected = parse_outputs(*outp);
    ASSERT_EQ(inputs.size(), expected.size()) << "the .inp and .out files disagree on the number of tests";
    ASSERT_GT(inputs.size(), 0u);
    int failures = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto got = tok.encode(inputs[i], /*add_bos=*/false, /*parse_special=*/false);
        if (got != expected[i]) {
            ++failures;
            ADD_FAILURE() << "string " << i << " \"" << escaped(inputs[i]) << "\"\n  expected " << show_ids(expected[i])
                          << "\n  got      " << show_ids(got);
        }
    }
    EXPECT_EQ(failures, 0) << "of " << inputs.size() << " strings";
}

TEST_P(VocabReference, DecodeRestoresTheTextWhereTheTokenizerIsLossless) {
    const std::string& path = GetParam();
    Tokenizer tok = load(path);
    if (tok.vocab().model == TokenizerModel::Wpm) GTEST_SKIP() << "WordPiece lowercases and drops accents: lossy";
    auto inp = read_file_to_string(path + ".inp");
    ASSERT_TRUE(inp.is_ok());
    for (const std::string& text : parse_inputs(*inp)) {
        const auto ids = tok.encode(text, /*add_bos=*/true, /*parse_special=*/false);
        EXPECT_EQ(tok.decode(ids), text) << "ids " << show_ids(ids);
    }
}

TEST_P(VocabReference, WordCacheDoesNotChangeTheIds) {
    const std::string& path = GetParam();
    Tokenizer cached = load(path);
    Tokenizer uncached = load(path, TokenizerOptions{.word_cache_entries = 0});
    auto inp = read_file_to_string(path + ".inp");
    ASSERT_TRUE(inp.is_ok());
    std::string all;
    for (const std::string& text : parse_inputs(*inp)) all += text + " " + text + "\n";
    const auto first = cached.encode(all, false, false);
    EXPECT_EQ(cached.encode(all, false, false), first);  // second run served from the cache
    EXPECT_EQ(uncached.encode(all, false, false), first);
}

TEST_P(VocabReference, BosOnlyWhenAsked) {
    Tokenizer tok = load(GetParam());
    if (tok.bos_id() == kNoToken) GTEST_SKIP() << "no BOS token";
    const auto plain = tok.encode("Hello world", false, false);
    const auto with_bos = tok.encode("Hello world", true, false);
    ASSERT_FALSE(plain.empty());
    EXPECT_NE(plain.front(), tok.bos_id());
    ASSERT_EQ(with_bos.size(), plain.size() + 1);
    EXPECT_EQ(with_bos.front(), tok.bos_id());
    EXPECT_TRUE(std::equal(plain.begin(), plain.end(), with_bos.begin() + 1));
    EXPECT_EQ(tok.encode("", true, false), std::vector<int32_t>{tok.bos_id()});
    EXPECT_TRUE(tok.encode("", false, false).empty());
}

TEST_P(VocabReference, ControlTokenTextIsParsedOnlyWhenAsked) {
    Tokenizer tok = load(GetParam());
    int32_t control = kNoToken;
    for (int32_t id = 0; id < int32_t(tok.vocab_size()); ++id) {
        const auto& t = tok.vocab().tokens[size_t(id)];
        if ((t.attrs & kAttrControl) && !(t.attrs & (kAttrLStrip | kAttrRStrip)) && t.text.size() > 2) {
            control = id;
            break;
        }
    }
    if (control == kNoToken) GTEST_SKIP() << "no control token";
    const std::string& text = tok.vocab().tokens[size_t(control)].text;
    const std::string input = "a " + text + " b";
    const auto parsed = tok.encode(input, false, true);
    const auto literal = tok.encode(input, false, false);
    EXPECT_EQ(std::count(parsed.begin(), parsed.end(), control), 1) << show_ids(parsed);
    EXPECT_EQ(std::count(literal.begin(), literal.end(), control), 0) << show_ids(literal);
    EXPECT_EQ(tok.decode(parsed, /*render_special=*/false).find(text), std::string::npos);
    EXPECT_NE(tok.decode(parsed, /*render_special=*/true).find(text), std::string::npos);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(VocabReference);
INSTANTIATE_TEST_SUITE_P(Vocab, VocabReference, testing::ValuesIn(reference_vocabs()), vocab_test_name);

std::string vocab_path(const std::string& name) { return test::testdata_path("vocab/ggml-vocab-" + name + ".gguf"); }

TEST(Tokenizer, UnknownOrMissingPreTokenizerFallsBackToDefaultWithAWarning) {
    const std::string path = vocab_path("gpt-neox");
    STRATA_SKIP_IF_MISSING(path);
    Tokenizer tok = load(path);
    EXPECT_FALSE(tok.vocab().pre.known);
    EXPECT_EQ(tok.vocab().pre.preset, "default");
    ASSERT_FALSE(tok.warnings().empty());
    EXPECT_NE(tok.warnings().front().find("default"), std::string::npos);
    const std::string text = "Hello world 123, it's fine";
    EXPECT_EQ(tok.decode(tok.encode(text, false, false)), text);
}

TEST(Tokenizer, SentencePieceWithoutReferenceLoadsAndRoundTrips) {
    const std::string path = vocab_path("baichuan");
    STRATA_SKIP_IF_MISSING(path);
    Tokenizer tok = load(path);
    EXPECT_EQ(tok.vocab().model, TokenizerModel::Spm);
    const std::string text = "Hello 世界! \xF0\x9F\xA6\x99 tabs\tand\nnewlines";
    EXPECT_EQ(tok.decode(tok.encode(text, true, false)), text);
}

TEST(Tokenizer, UserDefinedTokensAreMatchedEvenWithoutParseSpecial) {
    // mpt (gpt-neox vocabulary) has user-defined tokens for runs of spaces.
    const std::string path = vocab_path("mpt");
    STRATA_SKIP_IF_MISSING(path);
    Tokenizer tok = load(path);
    const int32_t four_spaces = tok.vocab().find("    ");
    ASSERT_NE(four_spaces, kNoToken);
    ASSERT_TRUE(tok.vocab().has_attr(four_spaces, kAttrUserDefined));
    const auto ids = tok.encode("a    b", false, false);
    EXPECT_NE(std::find(ids.begin(), ids.end(), four_spaces), ids.end()) << show_ids(ids);
}

TEST(Tokenizer, SpmByteFallbackAndMalformedUtf8) {
    const std::string path = vocab_path("llama-spm");
    STRATA_SKIP_IF_MISSING(path);
    Tokenizer tok = load(path);
    const std::string bad = "ab\xFF\xC3(";
    const auto ids = tok.encode(bad, false, false);
    EXPECT_EQ(tok.decode(ids), bad);  // every byte survives through <0xNN> tokens
    EXPECT_EQ(tok.token_to_piece(tok.vocab().find("<0x0A>")), "\n");
}

TEST(Tokenizer, SpmWordByWordEqualsWholeText) {
    // The tokenizer encodes SentencePiece text word by word (cacheable); that must give exactly
    // what one merge queue over the whole text gives, malformed UTF-8 included.
    const std::string path = vocab_path("llama-spm");
    STRATA_SKIP_IF_MISSING(path);
    Tokenizer tok = load(path);
    ASSERT_TRUE(tok.vocab().spm_splits_at_spaces);
    auto inp = read_file_to_string(path + ".inp");
    ASSERT_TRUE(inp.is_ok());
    std::string text = *inp + " \xE2\x96 broken\xF0 \xE2\x96\x81 marker  ";
    std::string escaped = "\xE2\x96\x81";
    for (char c : text) escaped += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
    std::vector<int32_t> whole;
    spm_encode(tok.vocab(), escaped, whole);
    EXPECT_EQ(tok.encode(text, false, false), whole);
}

TEST(Tokenizer, BpeRepairsMalformedUtf8) {
    const std::string path = vocab_path("gpt-2");
    STRATA_SKIP_IF_MISSING(path);
    Tokenizer tok = load(path);
    EXPECT_EQ(tok.decode(tok.encode("ab\xFF" "c", false, false)), "ab\xEF\xBF\xBD" "c");  // U+FFFD
}

}  // namespace
}  // namespace strata
