// The GBNF parser (good grammars, malformed ones with their positions), the matcher (strings
// accepted and refused, UTF-8, repetition bounds) and the token constraint (trie walk against
// token-by-token checks, candidate narrowing and the full-vocabulary fallback).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "runtime/grammar.h"
#include "runtime/grammar_matcher.h"
#include "runtime/grammar_sampling.h"

namespace strata {
namespace {

std::shared_ptr<const Grammar> compile(const std::string& text) {
    auto g = parse_grammar(text);
    EXPECT_TRUE(g.is_ok()) << g.status().message();
    if (!g) return nullptr;
    return std::make_shared<const Grammar>(std::move(*g));
}

// Whole sentences only: accepted and complete.
bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text) {
    GrammarMatcher m(g);
    return m.accept(text) && m.complete();
}

std::string error_of(const std::string& text) {
    auto g = parse_grammar(text);
    return g ? "" : g.status().message();
}

TEST(GrammarParser, ParsesRulesAlternativesGroupsAndComments) {
    auto g = compile(
        "# a comment line\n"
        "root ::= greeting (\" \" name)? \"!\"   # trailing comment\n"
        "greeting ::= \"hello\" | \"hi\"\n"
        "name ::= [A-Z] [a-z]*\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "hello!"));
    EXPECT_TRUE(matches(g, "hi Bob!"));
    EXPECT_FALSE(matches(g, "hi bob!"));
    EXPECT_FALSE(matches(g, "hey!"));
}

TEST(GrammarParser, AlternativesMayContinueOnTheNextLine) {
    auto g = compile("root ::= \"a\"\n  | \"b\"\n  | \"c\"\nother ::= \"x\"\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "b"));
    EXPECT_TRUE(matches(g, "c"));
    EXPECT_FALSE(matches(g, "x"));
}

TEST(GrammarParser, EscapesInLiteralsAndClasses) {
    auto g = compile("root ::= \"\\\"\\n\\t\\\\\" [\\x41-\\x43] \"\\u00e9\" [^\\]] \"\\U0001F600\"\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "\"\n\t\\B\xC3\xA9x\xF0\x9F\x98\x80"));
    EXPECT_FALSE(matches(g, "\"\n\t\\D\xC3\xA9x\xF0\x9F\x98\x80"));
    EXPECT_FALSE(matches(g, "\"\n\t\\B\xC3\xA9]\xF0\x9F\x98\x80"));
}

TEST(GrammarParser, MalformedGrammarsNameThePosition) {
    EXPECT_NE(error_of("root ::= \"abc\n").find("line 1, column 14"), std::string::npos) << error_of("root ::= \"abc\n");
    EXPECT_NE(error_of("root ::= [a-z\n").find("']' closing the character class"), std::string::npos);
    EXPECT_NE(error_of("root ::= (\"a\" | \"b\"\n").find("')' closing the group"), std::string::npos);
    EXPECT_NE(error_of("root ::= a\n").find("rule 'a' is used but never defined"), std::string::npos);
    EXPECT_NE(error_of("root ::= a\n").find("line 1, column 10"), std::string::npos);
    EXPECT_NE(error_of("start ::= \"a\"\n").find("rule named 'root'"), std::string::npos);
    EXPECT_NE(error_of("root ::= \"a\"\nroot ::= \"b\"\n").find("defined twice"), std::string::npos);
    EXPECT_NE(error_of("root = \"a\"\n").find("expected '::='"), std::string::npos);
    EXPECT_NE(error_of("root ::= \"a\"{3,1}\n").find("n >= m"), std::string::npos);
    EXPECT_NE(error_of("root ::= \"\\q\"\n").find("line 1, column 11: expected an escape"), std::string::npos);
    EXPECT_NE(error_of("root ::= [z-a]\n").find("range's end"), std::string::npos);
    EXPECT_NE(error_of("root ::= @\n").find("line 1, column 10"), std::string::npos);
    EXPECT_NE(error_of("root ::= \"a\"\n\n  x ::= \"b\" )\n").find("line 3"), std::string::npos);
    // Each error says what to do after the dash.
    EXPECT_NE(error_of("root ::= (\"a\"\n").find(" — "), std::string::npos);
}

TEST(GrammarParser, RefusesLeftRecursion) {
    EXPECT_NE(error_of("root ::= root \"a\" | \"b\"\n").find("left-recursive"), std::string::npos);
    EXPECT_NE(error_of("root ::= x root\nx ::= \"a\"?\n").find("left-recursive"), std::string::npos);
    EXPECT_NE(error_of("root ::= (\"a\"*)*\n").find("left-recursive"), std::string::npos);
    // Right recursion is fine.
    auto g = compile("root ::= \"(\" root \")\" | \"x\"\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "((x))"));
    EXPECT_FALSE(matches(g, "((x)"));
}

TEST(GrammarMatcher, RepetitionBounds) {
    auto g = compile("root ::= \"a\"{2,4} \"b\"{3} \"c\"{1,} \"d\"*\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "aabbbc"));
    EXPECT_TRUE(matches(g, "aaaabbbcccdd"));
    EXPECT_FALSE(matches(g, "abbbc"));       // below {2,4}
    EXPECT_FALSE(matches(g, "aaaaabbbc"));   // above {2,4}
    EXPECT_FALSE(matches(g, "aabbc"));       // {3} exactly
    EXPECT_FALSE(matches(g, "aabbbbc"));
    EXPECT_FALSE(matches(g, "aabbb"));       // + needs one
    auto p = compile("root ::= [0-9]+ \"?\"? [x]{0,2}\n");
    ASSERT_TRUE(p);
    EXPECT_TRUE(matches(p, "7"));
    EXPECT_TRUE(matches(p, "123?xx"));
    EXPECT_FALSE(matches(p, "123?xxx"));
}

TEST(GrammarMatcher, PrefixesCompletionAndExhaustion) {
    auto g = compile("root ::= \"{\" [a-z]* \"}\"\n");
    ASSERT_TRUE(g);
    GrammarMatcher m(g);
    EXPECT_TRUE(m.accepts("{ab"));
    EXPECT_FALSE(m.accepts("{aB"));
    EXPECT_FALSE(m.accept("x"));  // refused: nothing changes
    ASSERT_TRUE(m.accept("{ab"));
    EXPECT_FALSE(m.complete());
    ASSERT_TRUE(m.accept("}"));
    EXPECT_TRUE(m.complete());
    EXPECT_TRUE(m.exhausted());
    EXPECT_FALSE(m.accepts("a"));
    // Complete but extensible: not exhausted.
    auto digits = compile("root ::= [0-9]+\n");
    GrammarMatcher d(digits);
    ASSERT_TRUE(d.accept("12"));
    EXPECT_TRUE(d.complete());
    EXPECT_FALSE(d.exhausted());
}

TEST(GrammarMatcher, Utf8CodePointsAndCutSequences) {
    auto g = compile("root ::= [α-ω]+ \".\" [^a-z]\n");
    ASSERT_TRUE(g);
    EXPECT_FALSE(matches(g, "λόγος.€"));  // ό (U+03CC) lies above ω (U+03C9)
    EXPECT_TRUE(matches(g, "λογος.€"));
    EXPECT_FALSE(matches(g, "logos.€"));
    EXPECT_FALSE(matches(g, "λογος.e"));
    GrammarMatcher m(g);
    // λ is CE BB: a token may end after CE.
    EXPECT_TRUE(m.accept("\xCE"));
    EXPECT_FALSE(m.complete());
    EXPECT_FALSE(m.accepts("\x41"));   // not a continuation byte
    EXPECT_TRUE(m.accept("\xBB"));
    // A lead byte whose code points the class cannot hold is refused at once (U+4E00.. for E4).
    EXPECT_FALSE(m.accepts("\xE4"));
    EXPECT_FALSE(m.accepts("\xFF"));
    // Overlong forms of ASCII are refused, at the lead byte when they can only be overlong.
    auto angle = compile("root ::= \"<\"\n");
    GrammarMatcher a(angle);
    EXPECT_FALSE(a.accepts("\xC0"));
    EXPECT_FALSE(a.accepts("\xC0\xBC"));
    EXPECT_FALSE(a.accepts("\xE0\x80\xBC"));
    EXPECT_TRUE(a.accepts("<"));
    // Any code point with '.'.
    auto any = compile("root ::= . .\n");
    EXPECT_TRUE(matches(any, "a\xF0\x9F\x98\x80"));
    EXPECT_FALSE(matches(any, "abc"));
}

TEST(GrammarMatcher, AmbiguousGrammarsKeepEveryReading) {
    auto g = compile("root ::= x \"ab\" | \"a\" y\nx ::= \"a\"*\ny ::= \"b\" | \"bc\"\n");
    ASSERT_TRUE(g);
    EXPECT_TRUE(matches(g, "ab"));
    EXPECT_TRUE(matches(g, "aaab"));
    EXPECT_TRUE(matches(g, "abc"));
    EXPECT_FALSE(matches(g, "aabc"));
}

// ---- tokens -------------------------------------------------------------------------------

TokenVocabulary small_vocab() {
    // 0: end, 1..: pieces; "" is a control token (never allowed).
    return TokenVocabulary::from_pieces({"", "{", "}", "\"", "a", "ab", "abc", "b", "\"a", "\":", "1", "12", " ", "\xCE", "\xBB", "x", ""},
                                        {0});
}

TEST(GrammarSampling, TrieWalkAgreesWithTokenByTokenChecks) {
    auto vocab = std::make_shared<const TokenVocabulary>(small_vocab());
    auto g = compile("root ::= \"{\" \"\\\"\" [a-c\\u03bb]+ \"\\\":\" [0-9]+ \"}\"\n");
    ASSERT_TRUE(g);
    GrammarConstraint c(g, vocab);
    std::mt19937 rng(7);
    for (int step = 0; step < 12; ++step) {
        std::vector<int32_t> walked, checked;
        c.allowed_tokens(walked);
        for (int32_t id = 0; id < vocab->size(); ++id) {
            if (c.allows(id)) checked.push_back(id);
        }
        std::sort(walked.begin(), walked.end());
        ASSERT_EQ(walked, checked) << "step " << step;
        if (checked.empty()) break;
        const int32_t pick = checked[rng() % checked.size()];
        if (vocab->is_end(pick)) break;
        ASSERT_TRUE(c.accept(pick));
    }
    EXPECT_FALSE(c.allows(16));  // control token
}

TEST(GrammarSampling, EndTokenOnlyWhenComplete) {
    auto vocab = std::make_shared<const TokenVocabulary>(small_vocab());
    GrammarConstraint c(compile("root ::= \"a\" [b]?\n"), vocab);
    EXPECT_FALSE(c.allows(0));
    ASSERT_TRUE(c.accept(4));  // "a"
    EXPECT_TRUE(c.allows(0));
    EXPECT_FALSE(c.exhausted());
    ASSERT_TRUE(c.accept(7));  // "b"
    EXPECT_TRUE(c.exhausted());
}

TEST(GrammarSampling, CandidatesNarrowedThenFallBackToTheVocabulary) {
    auto vocab = std::make_shared<const TokenVocabulary>(small_vocab());
    GrammarConstraint c(compile("root ::= \"{\" \"}\"\n"), vocab);
    std::vector<float> logits(static_cast<size_t>(vocab->size()), 0.0f);
    logits[4] = 5.0f;  // the model wants "a"
    logits[1] = 1.0f;  // "{" is the grammar's only token
    CandidateQuery greedy;
    greedy.temperature = 0.0f;
    CandidateSet set;
    set.tokens = {{4, 5.0f}};
    int full_reads = 0;
    ASSERT_TRUE(constrain_candidates(set, greedy, c, [&] { ++full_reads; return logits.data(); }));
    ASSERT_EQ(set.tokens.size(), 1u);
    EXPECT_EQ(set.tokens[0].id, 1);
    EXPECT_EQ(full_reads, 1);
    EXPECT_EQ(c.fallbacks, 1);
    // A candidate set holding an allowed token needs no fallback; the others are dropped and the
    // probabilities renormalized over the survivors.
    ASSERT_TRUE(c.accept(1));
    CandidateQuery warm;
    warm.temperature = 1.0f;
    set = CandidateSet{};
    set.tokens = {{4, 5.0f}, {2, 1.0f}, {15, 0.5f}};
    set.top = 5.0f;
    set.sum = 100.0;
    ASSERT_TRUE(constrain_candidates(set, warm, c, [&] { ++full_reads; return logits.data(); }));
    ASSERT_EQ(set.tokens.size(), 1u);
    EXPECT_EQ(set.tokens[0].id, 2);
    EXPECT_FLOAT_EQ(set.top, 1.0f);
    EXPECT_DOUBLE_EQ(set.sum, 1.0);
    EXPECT_EQ(full_reads, 1);
    ASSERT_TRUE(c.accept(2));
    EXPECT_TRUE(c.exhausted());
}

}  // namespace
}  // namespace strata
