// SentencePiece BPE, as SentencePiece and llama.cpp run it: start from UTF-8 characters, keep a
// queue of adjacent pairs whose joined text is a token, always merge the highest-scoring pair
// (the leftmost one on equal scores), and emit what remains. A piece that is not a token (a
// character the vocabulary lacks) falls back to one <0xNN> token per byte.
#include <queue>

#include "tokenizer/encoders.h"
#include "tokenizer/unicode_text.h"

namespace strata {
namespace {

struct Symbol {
    int prev;
    int next;
    uint32_t start;  // byte offset in the text
    uint32_t size;   // bytes; 0 once merged into the symbol on its left
};

struct Pair {
    float score;
    int left;
    int right;
    uint32_t size;  // bytes of the joined text, to spot pairs made stale by other merges
};

struct LowerPriority {
    bool operator()(const Pair& a, const Pair& b) const {
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

class SpmSession {
public:
    SpmSession(const Vocab& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

    void run(std::vector<int32_t>& out) {
        symbols_.reserve(text_.size());
        for (size_t pos = 0; pos < text_.size();) {
            const size_t len = std::min(utf8_sequence_length(uint8_t(text_[pos])), text_.size() - pos);
            const int index = int(symbols_.size());
            symbols_.push_back({index - 1, pos + len == text_.size() ? -1 : index + 1, uint32_t(pos), uint32_t(len)});
            pos += len;
        }
        for (int i = 1; i < int(symbols_.size()); ++i) push_pair(i - 1, i);

        while (!queue_.empty()) {
            const Pair pair = queue_.top();
            queue_.pop();
            Symbol& left = symbols_[size_t(pair.left)];
            Symbol& right = symbols_[size_t(pair.right)];
            if (left.size == 0 || right.size == 0 || left.size + right.size != pair.size) continue;
            left.size += right.size;
            right.size = 0;
            left.next = right.next;
            if (right.next >= 0) symbols_[size_t(right.next)].prev = pair.left;
            push_pair(left.prev, pair.left);
            push_pair(pair.left, left.next);
        }

        if (symbols_.empty()) return;
        for (int i = 0; i != -1; i = symbols_[size_t(i)].next) emit(symbols_[size_t(i)], out);
    }

private:
    void push_pair(int left, int right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols_[size_t(left)];
        const Symbol& r = symbols_[size_t(right)];
        const int32_t id = vocab_.find(text_.substr(l.start, l.size + r.size));
        if (id == kNoToken) return;
        queue_.push({vocab_.tokens[size_t(id)].score, left, right, l.size + r.size});
    }

    // Every merged symbol is a token by construction; only single characters can be missing.
    void emit(const Symbol& s, std::vector<int32_t>& out) const {
        const std::string_view piece = text_.substr(s.start, s.size);
        const int32_t id = vocab_.find(piece);
        if (id != kNoToken) {
            out.push_back(id);
            return;
        }
        for (char c : piece) {
            const int32_t byte_id = vocab_.byte_tokens[uint8_t(c)];
            if (byte_id != kNoToken) {
                out.push_back(byte_id);
            } else if (vocab_.unk_id != kNoToken) {
                out.push_back(vocab_.unk_id);
            }
        }
    }

    const Vocab& vocab_;
    std::string_view text_;
    std::vector<Symbol> symbols_;
    std::priority_queue<Pair, std::vector<Pair>, LowerPriority> queue_;
};

}  // namespace

void spm_encode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out) {
    SpmSession(vocab, text).run(out);
}

}  // namespace strata
