#pragma once
// Sampling under a grammar: which vocabulary tokens may come next, asked cheaply.
//
// TokenVocabulary is built once per tokenizer: every token's bytes, which tokens end the
// generation, and a trie over the bytes, so the full-vocabulary question walks each shared prefix
// once and drops a whole subtree at the first byte the grammar refuses.
//
// The sampler's reduction (runtime/select_candidates.h, or the GPU's) already narrows the row to
// the few tokens its filters can keep. constrain_candidates() tests only those (a few dozen byte
// walks) and renormalizes the survivors; only when none survives does it ask the whole vocabulary
// (the trie walk over the row's logits, copied to the host on a GPU model), so the grammar costs
// a decode step little when the model already wants what the grammar allows.
//
//   auto vocab = std::make_shared<const TokenVocabulary>(TokenVocabulary::from(tokenizer));
//   GrammarConstraint g(grammar, vocab);
//   int32_t next = session.sample(sampler, &g);      // masked by the grammar
//   g.accept(next);  if (g.exhausted()) stop;

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/logit_candidates.h"
#include "runtime/grammar_matcher.h"
#include "tokenizer/tokenizer.h"

namespace strata {

class TokenVocabulary {
public:
    static TokenVocabulary from(const Tokenizer& tokenizer);
    // For tests: pieces[i] is token i's bytes; `end_tokens` end the generation.
    static TokenVocabulary from_pieces(std::vector<std::string> pieces, std::vector<int32_t> end_tokens);

    int64_t size() const { return static_cast<int64_t>(pieces_.size()); }
    const std::string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }
    bool is_end(int32_t id) const { return kinds_[static_cast<size_t>(id)] == Kind::End; }
    bool is_text(int32_t id) const { return kinds_[static_cast<size_t>(id)] == Kind::Text; }
    const std::vector<int32_t>& end_tokens() const { return end_tokens_; }

    // Trie over the text tokens' bytes: node 0 is the root (the empty prefix).
    struct Node {
        uint32_t edge_begin = 0, edge_end = 0;    // into edges()
        uint32_t token_begin = 0, token_end = 0;  // into sorted_ids(): the tokens ending here
    };
    struct Edge {
        unsigned char byte = 0;
        uint32_t node = 0;
    };
    const std::vector<Node>& nodes() const { return nodes_; }
    const std::vector<Edge>& edges() const { return edges_; }
    const std::vector<int32_t>& sorted_ids() const { return sorted_ids_; }

private:
    enum class Kind : uint8_t { Text, End, Other };  // Other: control tokens, empty pieces: never allowed
    void build_trie();
    uint32_t build_node(size_t lo, size_t hi, size_t depth);

    std::vector<std::string> pieces_;
    std::vector<Kind> kinds_;
    std::vector<int32_t> end_tokens_;
    std::vector<int32_t> sorted_ids_;  // text tokens by their bytes
    std::vector<Node> nodes_;
    std::vector<Edge> edges_;
};

class GrammarConstraint {
public:
    GrammarConstraint(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenVocabulary> vocab);

    // Whether token `id` may come next (an end token: when the text so far is complete).
    bool allows(int32_t id) const;
    // Every token that may come next, by the trie walk (ids in any order).
    void allowed_tokens(std::vector<int32_t>& out) const;
    // Advances by the token; false (nothing changes) when the grammar refuses it.
    bool accept(int32_t id);
    // The text so far is complete and nothing can follow: the generation ends.
    bool exhausted() const { return matcher_.exhausted(); }
    bool complete() const { return matcher_.complete(); }
    const GrammarMatcher& matcher() const { return matcher_; }

    // How often constrain_candidates() needed the whole vocabulary (for bench and tests).
    int64_t fallbacks = 0;

private:
    void walk(uint32_t node, size_t depth, std::vector<int32_t>& out) const;

    GrammarMatcher matcher_;
    std::shared_ptr<const TokenVocabulary> vocab_;
    mutable std::vector<GrammarMatcher::State> walk_states_;  // one per trie depth, reused
};

// Narrows a sampler's candidate set to the tokens the grammar allows and renormalizes it, so the
// sampler draws from the grammar-masked distribution of those candidates. When none of them is
// allowed, `full_logits()` is called for the row's logits (penalties not yet applied) and the set
// is rebuilt from every allowed token of the vocabulary with `query`'s penalties. Returns false
// when the grammar allows no token at all (the caller ends the generation).
bool constrain_candidates(CandidateSet& set, const CandidateQuery& query, GrammarConstraint& grammar,
                          const std::function<const float*()>& full_logits);

}  // namespace strata
