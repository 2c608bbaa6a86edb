#pragma once
// A context-free grammar in llama.cpp's GBNF syntax, parsed into flat rules that the matcher
// (runtime/grammar_matcher.h) walks as a pushdown automaton over Unicode code points.
//
//   root   ::= "{" ws pair ( "," ws pair )* "}"      # rules, alternatives, sequences, groups
//   pair   ::= [a-z]+ ":" ws ( "true" | [0-9]{1,3} )  # classes with ranges, negation [^"], `.`
//   ws     ::= [ \t\n]*                                # * + ? {m} {m,} {m,n}; escapes \n \x41 \u00e9
//
//   Result<Grammar> g = parse_grammar(text);          // errors name the line and column
//   GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
//
// Repetitions and groups become rules of their own while parsing (x* is R ::= x R | ε, x{2,4} is
// x x R2 with R2 ::= x R1 | ε, ...), so the matcher only knows two kinds of element: a character
// class and a reference to a rule. Left recursion (direct or through nullable rules) is refused
// at parse time: a top-down matcher would expand it forever.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace strata {

struct GrammarElement {
    enum class Kind : uint8_t {
        End,    // closes an alternative
        Chars,  // one code point out of a class
        Rule,   // a reference to rule `rule`
    };
    Kind kind = Kind::End;
    bool negated = false;   // Chars: matches the code points NOT in the ranges
    uint32_t rule = 0;      // Rule: the rule's index
    uint32_t first = 0;     // Chars: the class's ranges are Grammar::ranges[first, first + count)
    uint32_t count = 0;
};

struct CodePointRange {
    uint32_t lo = 0, hi = 0;  // inclusive
};

struct Grammar {
    // Every alternative of every rule, each closed by an End element, in one array: the matcher
    // keeps pointers into it (a position = the next element to match).
    std::vector<GrammarElement> elements;
    std::vector<CodePointRange> ranges;
    // rule → the offsets in `elements` where its alternatives start.
    std::vector<std::vector<uint32_t>> alternatives;
    std::vector<std::string> rule_names;  // generated rules are named after their parent: "pair-3"
    uint32_t root = 0;

    bool class_matches(const GrammarElement& e, uint32_t cp) const {
        bool in = false;
        for (uint32_t i = e.first; i < e.first + e.count && !in; ++i) in = cp >= ranges[i].lo && cp <= ranges[i].hi;
        return in != e.negated;
    }
    // Whether some code point in [lo, hi] matches (for a UTF-8 sequence cut inside a token).
    bool class_intersects(const GrammarElement& e, uint32_t lo, uint32_t hi) const;
};

// Parses GBNF text whose start rule is `root_rule`. Errors read "grammar: line L, column C:
// expected X, got Y — hint".
Result<Grammar> parse_grammar(std::string_view text, std::string_view root_rule = "root");

// Quotes `text` as a GBNF string literal ("a\"b\n"): for grammars written by code.
std::string gbnf_literal(std::string_view text);

}  // namespace strata
