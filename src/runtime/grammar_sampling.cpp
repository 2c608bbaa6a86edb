#include "runtime/grammar_sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.h"

namespace strata {

TokenVocabulary TokenVocabulary::from(const Tokenizer& tokenizer) {
    std::vector<std::string> pieces(tokenizer.vocab_size());
    std::vector<int32_t> ends;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const auto id = static_cast<int32_t>(i);
        if (tokenizer.is_control(id)) continue;  // empty piece: never allowed (unless an end token)
        pieces[i] = tokenizer.token_to_piece(id, /*render_special=*/false);
    }
    for (int32_t id : {tokenizer.eos_id(), tokenizer.eot_id()}) {
        if (id >= 0 && static_cast<size_t>(id) < pieces.size() && std::find(ends.begin(), ends.end(), id) == ends.end()) ends.push_back(id);
    }
    return from_pieces(std::move(pieces), std::move(ends));
}

TokenVocabulary TokenVocabulary::from_pieces(std::vector<std::string> pieces, std::vector<int32_t> end_tokens) {
    TokenVocabulary v;
    v.pieces_ = std::move(pieces);
    v.kinds_.assign(v.pieces_.size(), Kind::Other);
    for (size_t i = 0; i < v.pieces_.size(); ++i) {
        if (!v.pieces_[i].empty()) v.kinds_[i] = Kind::Text;
    }
    for (int32_t id : end_tokens) {
        STRATA_CHECK(id >= 0 && static_cast<size_t>(id) < v.pieces_.size(), "an end token inside the vocabulary");
        v.kinds_[static_cast<size_t>(id)] = Kind::End;
    }
    v.end_tokens_ = std::move(end_tokens);
    v.build_trie();
    return v;
}

void TokenVocabulary::build_trie() {
    for (size_t i = 0; i < pieces_.size(); ++i) {
        if (kinds_[i] == Kind::Text) sorted_ids_.push_back(static_cast<int32_t>(i));
    }
    std::sort(sorted_ids_.begin(), sorted_ids_.end(), [&](int32_t a, int32_t b) { return piece(a) < piece(b); });
    nodes_.reserve(sorted_ids_.size() * 2 + 1);
    build_node(0, sorted_ids_.size(), 0);
}

// The node of the prefix that the pieces sorted_ids_[lo, hi) share (their first `depth` bytes);
// shorter pieces sort first, so those ending here are a prefix of the range.
uint32_t TokenVocabulary::build_node(size_t lo, size_t hi, size_t depth) {
    const auto index = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(Node{});
    size_t i = lo;
    while (i < hi && piece(sorted_ids_[i]).size() == depth) ++i;
    nodes_[index].token_begin = static_cast<uint32_t>(lo);
    nodes_[index].token_end = static_cast<uint32_t>(i);
    // Children: one per distinct next byte. Edges of one node are contiguous, so they are
    // collected first and appended after the recursion (which appends its own).
    std::vector<Edge> children;
    std::vector<std::pair<size_t, size_t>> ranges;
    while (i < hi) {
        const auto byte = static_cast<unsigned char>(piece(sorted_ids_[i])[depth]);
        size_t j = i + 1;
        while (j < hi && static_cast<unsigned char>(piece(sorted_ids_[j])[depth]) == byte) ++j;
        children.push_back(Edge{byte, 0});
        ranges.emplace_back(i, j);
        i = j;
    }
    for (size_t c = 0; c < children.size(); ++c) children[c].node = build_node(ranges[c].first, ranges[c].second, depth + 1);
    nodes_[index].edge_begin = static_cast<uint32_t>(edges_.size());
    edges_.insert(edges_.end(), children.begin(), children.end());
    nodes_[index].edge_end = static_cast<uint32_t>(edges_.size());
    return index;
}

GrammarConstraint::GrammarConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocab)
    : matcher_(std::move(grammar)), vocab_(std::move(vocab)) {
    STRATA_CHECK(vocab_ != nullptr, "a grammar constraint needs the vocabulary");
}

bool GrammarConstraint::allows(int32_t id) const {
    if (id < 0 || id >= vocab_->size()) return false;
    if (vocab_->is_end(id)) return matcher_.complete();
    if (!vocab_->is_text(id)) return false;
    return matcher_.accepts(vocab_->piece(id));
}

void GrammarConstraint::allowed_tokens(std::vector<int32_t>& out) const {
    out.clear();
    if (matcher_.complete()) out.insert(out.end(), vocab_->end_tokens().begin(), vocab_->end_tokens().end());
    if (walk_states_.empty()) walk_states_.resize(1);
    walk_states_[0] = matcher_.state();
    walk(0, 0, out);
}

void GrammarConstraint::walk(uint32_t node_index, size_t depth, std::vector<int32_t>& out) const {
    const TokenVocabulary::Node& node = vocab_->nodes()[node_index];
    if (depth > 0) {
        for (uint32_t t = node.token_begin; t < node.token_end; ++t) out.push_back(vocab_->sorted_ids()[t]);
    }
    if (walk_states_.size() < depth + 2) walk_states_.resize(depth + 2);
    for (uint32_t e = node.edge_begin; e < node.edge_end; ++e) {
        const TokenVocabulary::Edge& edge = vocab_->edges()[e];
        // walk_states_[depth] stays valid: deeper calls only write above depth + 1.
        if (!matcher_.step(walk_states_[depth], edge.byte, walk_states_[depth + 1])) continue;
        walk(edge.node, depth + 1, out);
    }
}

bool GrammarConstraint::accept(int32_t id) {
    if (!allows(id)) return false;
    if (vocab_->is_end(id)) return true;
    return matcher_.accept(vocab_->piece(id));
}

namespace {
bool before(const LogitCandidate& a, const LogitCandidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// top and sum over the set alone, as the reduction computes them over a whole row.
void renormalize(CandidateSet& set, const CandidateQuery& query) {
    if (query.temperature == 0.0f || set.top_k > 0 || set.tokens.empty()) return;
    float top = -INFINITY;
    for (const LogitCandidate& c : set.tokens) top = std::max(top, c.logit);
    double sum = 0.0;
    for (const LogitCandidate& c : set.tokens) sum += std::exp((c.logit - top) / query.temperature);
    set.top = top;
    set.sum = sum;
}
}  // namespace

bool constrain_candidates(CandidateSet& set, const CandidateQuery& query, GrammarConstraint& grammar,
                          const std::function<const float*()>& full_logits) {
    auto kept = std::remove_if(set.tokens.begin(), set.tokens.end(), [&](const LogitCandidate& c) { return !grammar.allows(c.id); });
    set.tokens.erase(kept, set.tokens.end());
    if (!set.tokens.empty()) {
        renormalize(set, query);
        return true;
    }
    // None of the candidates: every allowed token of the vocabulary, with its penalized logit.
    ++grammar.fallbacks;
    std::vector<int32_t> allowed;
    grammar.allowed_tokens(allowed);
    if (allowed.empty()) return false;
    const float* logits = full_logits();
    set.tokens.clear();
    for (int32_t id : allowed) {
        float logit = logits[id];
        auto it = std::lower_bound(query.penalized_ids.begin(), query.penalized_ids.end(), id);
        if (it != query.penalized_ids.end() && *it == id) {
            const int32_t count = query.penalized_counts[static_cast<size_t>(it - query.penalized_ids.begin())];
            logit = penalized_logit(logit, count, query.repetition_penalty, query.presence_penalty, query.frequency_penalty);
        }
        set.tokens.push_back(LogitCandidate{id, logit});
    }
    if (query.temperature == 0.0f) {
        const LogitCandidate best = *std::min_element(set.tokens.begin(), set.tokens.end(), before);
        set.tokens.assign(1, best);
        set.top_k = 0;
        return true;
    }
    set.top_k = query.takes_top_k(static_cast<int64_t>(set.tokens.size())) ? query.top_k : 0;
    renormalize(set, query);
    return true;
}

}  // namespace strata
