#pragma once
// The incremental recognizer of a Grammar (runtime/grammar.h): a pushdown automaton over Unicode
// code points, fed bytes. Its state is the set of stacks the text so far can have left: each
// stack holds positions in the grammar's alternatives (the top = the next element to match), and
// every stack is expanded until its top is a character class, so one code point advances each
// stack by one class test. An empty stack means the text so far is a whole sentence of the root
// rule. Ambiguous grammars keep several stacks; identical ones are merged.
//
// Bytes come from tokens, and a byte-level token can end inside a UTF-8 sequence: the matcher
// then keeps the partial sequence and accepts it when some stack's class holds a code point
// that starts with those bytes.
//
//   GrammarMatcher m(grammar);
//   m.accepts("{\"a\"");     // true: a prefix of some sentence (state unchanged)
//   m.accept("{\"a\":1}");   // advances
//   m.complete();            // a whole sentence: end-of-generation is allowed
//   m.exhausted();           // and nothing can follow it

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/grammar.h"

namespace strata {

class GrammarMatcher {
public:
    using Stack = std::vector<const GrammarElement*>;

    // The state after a UTF-8 sequence's first bytes: the code point so far and the bytes left.
    struct PartialUtf8 {
        uint32_t value = 0;
        int remaining = 0;
        uint32_t min = 0;  // the smallest code point its length may encode (overlong forms are refused)
    };
    // Everything a walk needs to go on from some text: the stacks and the cut sequence.
    struct State {
        std::vector<Stack> stacks;
        PartialUtf8 partial;
        bool dead() const { return stacks.empty(); }
    };

    explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

    // Whether `bytes` can follow the text accepted so far (a prefix of some sentence).
    bool accepts(std::string_view bytes) const;
    // Advances by `bytes`; false (and no change) when they cannot follow.
    bool accept(std::string_view bytes);
    // The text so far is a sentence of the grammar (no cut UTF-8 sequence pending).
    bool complete() const;
    // Complete, and no character can extend it: generation must stop here.
    bool exhausted() const;

    const State& state() const { return state_; }
    // One byte from `from` into `to` (cleared first); false when the byte cannot follow.
    bool step(const State& from, unsigned char byte, State& to) const;
    const Grammar& grammar() const { return *grammar_; }

private:
    void expand(Stack stack, std::vector<Stack>& out) const;
    void advance(const std::vector<Stack>& stacks, uint32_t cp, std::vector<Stack>& out) const;
    bool partial_possible(const std::vector<Stack>& stacks, const PartialUtf8& p) const;

    std::shared_ptr<const Grammar> grammar_;
    State state_;
};

}  // namespace strata
