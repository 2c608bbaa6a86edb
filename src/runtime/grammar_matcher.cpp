#include "runtime/grammar_matcher.h"

#include <algorithm>

#include "core/check.h"

namespace strata {

namespace {
using Kind = GrammarElement::Kind;

void add_unique(std::vector<GrammarMatcher::Stack>& out, GrammarMatcher::Stack&& s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
}
}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
    STRATA_CHECK(grammar_ != nullptr, "a matcher needs a grammar");
    for (uint32_t alt : grammar_->alternatives[grammar_->root]) {
        Stack s;
        s.push_back(&grammar_->elements[alt]);
        expand(std::move(s), state_.stacks);
    }
}

// Replaces rule references (and finished alternatives) at the top until a class is on top, or
// the stack is empty; each way through a rule's alternatives gives its own stack.
void GrammarMatcher::expand(Stack stack, std::vector<Stack>& out) const {
    while (!stack.empty() && stack.back()->kind == Kind::End) stack.pop_back();
    if (stack.empty() || stack.back()->kind == Kind::Chars) {
        add_unique(out, std::move(stack));
        return;
    }
    const GrammarElement* ref = stack.back();
    stack.pop_back();
    // What follows the reference in its alternative, unless the reference ends it (a tail call
    // keeps the stack from growing on repetitions).
    if ((ref + 1)->kind != Kind::End) stack.push_back(ref + 1);
    const std::vector<uint32_t>& alts = grammar_->alternatives[ref->rule];
    for (size_t i = 0; i < alts.size(); ++i) {
        Stack s = i + 1 == alts.size() ? std::move(stack) : stack;
        s.push_back(&grammar_->elements[alts[i]]);
        expand(std::move(s), out);
    }
}

void GrammarMatcher::advance(const std::vector<Stack>& stacks, uint32_t cp, std::vector<Stack>& out) const {
    for (const Stack& s : stacks) {
        if (s.empty() || !grammar_->class_matches(*s.back(), cp)) continue;
        Stack next(s.begin(), s.end() - 1);
        next.push_back(s.back() + 1);
        expand(std::move(next), out);
    }
}

bool GrammarMatcher::partial_possible(const std::vector<Stack>& stacks, const PartialUtf8& p) const {
    const int shift = 6 * p.remaining;
    const uint32_t lo = std::max(p.value << shift, p.min);
    const uint32_t hi = std::min((p.value << shift) | ((1u << shift) - 1), 0x10FFFFu);
    if (lo > hi) return false;
    for (const Stack& s : stacks) {
        if (!s.empty() && grammar_->class_intersects(*s.back(), lo, hi)) return true;
    }
    return false;
}

bool GrammarMatcher::step(const State& from, unsigned char byte, State& to) const {
    to.stacks.clear();
    to.partial = {};
    uint32_t cp = 0;
    if (from.partial.remaining > 0) {
        if ((byte & 0xC0) != 0x80) return false;
        to.partial = {(from.partial.value << 6) | (byte & 0x3Fu), from.partial.remaining - 1, from.partial.min};
    } else if (byte < 0x80) {
        cp = byte;
    } else if ((byte & 0xE0) == 0xC0) {
        to.partial = {byte & 0x1Fu, 1, 0x80};
    } else if ((byte & 0xF0) == 0xE0) {
        to.partial = {byte & 0x0Fu, 2, 0x800};
    } else if ((byte & 0xF8) == 0xF0) {
        to.partial = {byte & 0x07u, 3, 0x10000};
    } else {
        return false;  // a continuation byte with nothing to continue, or not UTF-8
    }
    if (to.partial.remaining > 0) {
        if (!partial_possible(from.stacks, to.partial)) return false;
        to.stacks = from.stacks;
        return true;
    }
    if (from.partial.remaining > 0) {
        cp = to.partial.value;
        // Overlong forms (C0 BC for '<') and surrogates are not UTF-8: a byte-level vocabulary
        // has tokens for them, and a grammar must not let them stand for the character.
        if (cp < to.partial.min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    }
    to.partial = {};
    advance(from.stacks, cp, to.stacks);
    return !to.stacks.empty();
}

bool GrammarMatcher::accepts(std::string_view bytes) const {
    State a = state_, b;
    for (char c : bytes) {
        if (!step(a, static_cast<unsigned char>(c), b)) return false;
        std::swap(a, b);
    }
    return true;
}

bool GrammarMatcher::accept(std::string_view bytes) {
    State a = state_, b;
    for (char c : bytes) {
        if (!step(a, static_cast<unsigned char>(c), b)) return false;
        std::swap(a, b);
    }
    state_ = std::move(a);
    return true;
}

bool GrammarMatcher::complete() const {
    if (state_.partial.remaining > 0) return false;
    return std::any_of(state_.stacks.begin(), state_.stacks.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::exhausted() const {
    if (state_.partial.remaining > 0) return false;
    return std::all_of(state_.stacks.begin(), state_.stacks.end(), [](const Stack& s) { return s.empty(); });
}

}  // namespace strata
