// Byte-level BPE of one pre-tokenized word (GPT-2 and its descendants, as Hugging Face's BPE
// model and llama.cpp run it): one symbol per byte (the byte-level alphabet has a token for
// each), then merge the adjacent pair with the lowest merge rank, leftmost first on equal ranks,
// until no pair has a merge. Symbols are token ids, so a merge lookup is one hash probe.
#include <queue>

#include "tokenizer/encoders.h"
#include "tokenizer/unicode_text.h"

namespace strata {
namespace {

struct Symbol {
    int prev;
    int next;
    int32_t id;    // the token this symbol's bytes form
    bool alive;    // false once merged into the symbol on its left
};

struct Pair {
    int32_t rank;
    int left;
    int right;
    int32_t left_id;   // the ids the pair was made from: a later merge of either side makes it stale
    int32_t right_id;
    int32_t result;
};

struct LowerPriority {
    bool operator()(const Pair& a, const Pair& b) const {
        return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
    }
};

}  // namespace

void bpe_encode_word(const Vocab& vocab, std::string_view raw_word, std::vector<int32_t>& out) {
    if (raw_word.empty()) return;
    if (vocab.pre.ignore_merges) {
        // Llama-3 style: a word that is a token is taken whole, even where merges would split it.
        const int32_t whole = vocab.find(byte_level_encode(raw_word));
        if (whole != kNoToken) {
            out.push_back(whole);
            return;
        }
    }

    std::vector<Symbol> symbols;
    symbols.reserve(raw_word.size());
    for (size_t i = 0; i < raw_word.size(); ++i) {
        const int index = int(i);
        symbols.push_back({index - 1, i + 1 == raw_word.size() ? -1 : index + 1,
                           vocab.byte_tokens[uint8_t(raw_word[i])], true});
    }

    std::priority_queue<Pair, std::vector<Pair>, LowerPriority> queue;
    auto push_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const int32_t l = symbols[size_t(left)].id, r = symbols[size_t(right)].id;
        if (l == kNoToken || r == kNoToken) return;
        if (const BpeMerge* m = vocab.merge(l, r)) queue.push({m->rank, left, right, l, r, m->result});
    };
    for (int i = 1; i < int(symbols.size()); ++i) push_pair(i - 1, i);

    while (!queue.empty()) {
        const Pair pair = queue.top();
        queue.pop();
        Symbol& left = symbols[size_t(pair.left)];
        Symbol& right = symbols[size_t(pair.right)];
        if (!left.alive || !right.alive || left.id != pair.left_id || right.id != pair.right_id) continue;
        left.id = pair.result;
        right.alive = false;
        left.next = right.next;
        if (right.next >= 0) symbols[size_t(right.next)].prev = pair.left;
        push_pair(left.prev, pair.left);
        push_pair(pair.left, left.next);
    }

    // A byte whose character is missing from the vocabulary has no token; llama.cpp drops it too.
    for (int i = 0; i != -1; i = symbols[size_t(i)].next) {
        if (symbols[size_t(i)].id != kNoToken) out.push_back(symbols[size_t(i)].id);
    }
}

}  // namespace strata
