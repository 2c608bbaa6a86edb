#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>
#include <unordered_map>

#include "gguf/reader.h"
#include "tokenizer/encoders.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode_text.h"

namespace strata {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // ▁

bool is_ascii_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

// A piece of the input: either a special token cut out of it, or text between such tokens.
struct Tokenizer::Fragment {
    int32_t token = kNoToken;  // kNoToken: `text` is plain text to tokenize
    std::string_view text;
};

// word -> ids. Bounded: when full it starts over, which keeps the hot words of any text.
class Tokenizer::WordCache {
public:
    explicit WordCache(size_t capacity) : capacity_(capacity) {}

    bool lookup(std::string_view word, std::vector<int32_t>& out) const {
        std::lock_guard lock(mutex_);
        auto it = map_.find(word);
        if (it == map_.end()) return false;
        out.insert(out.end(), it->second.begin(), it->second.end());
        return true;
    }
    void insert(std::string_view word, const int32_t* ids, size_t n) {
        std::lock_guard lock(mutex_);
        if (map_.size() >= capacity_) map_.clear();
        map_.try_emplace(std::string(word), ids, ids + n);
    }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    size_t capacity_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> map_;
};

// Byte trie over the special token texts: finds every occurrence of every special token in one
// pass over the input (at most max-token-length steps per position, most positions rejected by
// the first-byte filter).
struct Tokenizer::SpecialMatcher {
    struct Node {
        std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
        int32_t token = kNoToken;
    };
    std::vector<Node> nodes{1};
    std::array<bool, 256> first_byte{};
    std::unordered_map<int32_t, int32_t> priority;  // token id -> position in vocab.special_tokens

    explicit SpecialMatcher(const Vocab& vocab) {
        for (size_t rank = 0; rank < vocab.special_tokens.size(); ++rank) {
            const int32_t id = vocab.special_tokens[rank];
            priority[id] = int32_t(rank);
            const std::string& text = vocab.tokens[size_t(id)].text;
            first_byte[uint8_t(text[0])] = true;
            int32_t node = 0;
            for (char c : text) node = child(node, uint8_t(c), /*create=*/true);
            nodes[size_t(node)].token = id;
        }
    }

    int32_t child(int32_t node, uint8_t byte, bool create) {
        auto& kids = nodes[size_t(node)].children;
        auto it = std::lower_bound(kids.begin(), kids.end(), byte, [](const auto& p, uint8_t b) { return p.first < b; });
        if (it != kids.end() && it->first == byte) return it->second;
        if (!create) return -1;
        const int32_t created = int32_t(nodes.size());
        kids.insert(it, {byte, created});
        nodes.emplace_back();
        return created;
    }
    int32_t find_child(int32_t node, uint8_t byte) const {
        const auto& kids = nodes[size_t(node)].children;
        auto it = std::lower_bound(kids.begin(), kids.end(), byte, [](const auto& p, uint8_t b) { return p.first < b; });
        return it != kids.end() && it->first == byte ? it->second : -1;
    }
};

Tokenizer::Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& gguf, const TokenizerOptions& options) {
    auto vocab = Vocab::from_gguf(gguf);
    if (!vocab) return vocab.status().with_context(fmt::format("loading the tokenizer of {}", gguf.path()));
    return from_vocab(std::move(*vocab), options);
}

Result<Tokenizer> Tokenizer::from_vocab(Vocab vocab, const TokenizerOptions& options) {
    Tokenizer tok;
    tok.vocab_ = std::move(vocab);
    if (tok.vocab_.model == TokenizerModel::Bpe) {
        auto splitter = RegexSplitter::compile(tok.vocab_.pre.patterns);
        if (!splitter) return splitter.status().with_context(fmt::format("pre-tokenizer {:?}", tok.vocab_.pre.name));
        tok.splitter_ = std::make_unique<RegexSplitter>(std::move(*splitter));
    }
    if (options.word_cache_entries > 0) tok.cache_ = std::make_unique<WordCache>(options.word_cache_entries);
    tok.special_ = std::make_unique<SpecialMatcher>(tok.vocab_);
    return tok;
}

// Cuts special tokens out of `text` with llama.cpp's semantics: tokens are taken longest first,
// each one at every non-overlapping occurrence (left to right) inside text that no earlier token
// took; strip attributes also take the whitespace next to the token.
std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text, bool parse_special) const {
    struct Occurrence {
        int32_t priority;
        uint32_t pos;
        int32_t token;
    };
    std::vector<Occurrence> found;
    const SpecialMatcher& m = *special_;
    for (size_t pos = 0; pos < text.size(); ++pos) {
        if (!m.first_byte[uint8_t(text[pos])]) continue;
        int32_t node = 0;
        for (size_t i = pos; i < text.size(); ++i) {
            node = m.find_child(node, uint8_t(text[i]));
            if (node < 0) break;
            const int32_t token = m.nodes[size_t(node)].token;
            if (token == kNoToken) continue;
            if (!parse_special && vocab_.has_attr(token, kAttrControl | kAttrUnknown)) continue;
            found.push_back({m.priority.at(token), uint32_t(pos), token});
        }
    }
    if (found.empty()) return {Fragment{kNoToken, text}};

    std::sort(found.begin(), found.end(), [](const Occurrence& a, const Occurrence& b) {
        return a.priority != b.priority ? a.priority < b.priority : a.pos < b.pos;
    });
    std::vector<uint8_t> taken(text.size(), 0);  // 1: part of a token, 2: whitespace it stripped
    std::vector<Occurrence> accepted;
    for (const Occurrence& occ : found) {
        const size_t len = vocab_.tokens[size_t(occ.token)].text.size();
        if (std::any_of(taken.begin() + occ.pos, taken.begin() + occ.pos + len, [](uint8_t t) { return t != 0; })) {
            continue;
        }
        std::fill(taken.begin() + occ.pos, taken.begin() + occ.pos + len, uint8_t(1));
        accepted.push_back(occ);
        const uint32_t attrs = vocab_.tokens[size_t(occ.token)].attrs;
        if (attrs & kAttrLStrip) {
            for (size_t i = occ.pos; i > 0 && taken[i - 1] == 0 && is_ascii_space(text[i - 1]); --i) taken[i - 1] = 2;
        }
        if (attrs & kAttrRStrip) {
            for (size_t i = occ.pos + len; i < text.size() && taken[i] == 0 && is_ascii_space(text[i]); ++i) taken[i] = 2;
        }
    }
    std::sort(accepted.begin(), accepted.end(), [](const Occurrence& a, const Occurrence& b) { return a.pos < b.pos; });

    std::vector<Fragment> fragments;
    size_t next_token = 0;
    for (size_t pos = 0; pos < text.size();) {
        if (taken[pos] == 0) {
            size_t end = pos;
            while (end < text.size() && taken[end] == 0) ++end;
            fragments.push_back({kNoToken, text.substr(pos, end - pos)});
            pos = end;
        } else if (next_token < accepted.size() && accepted[next_token].pos == pos) {
            const int32_t token = accepted[next_token++].token;
            fragments.push_back({token, {}});
            pos += vocab_.tokens[size_t(token)].text.size();
        } else {
            ++pos;  // stripped whitespace
        }
    }
    return fragments;
}

void Tokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
    if (cache_ && cache_->lookup(word, out)) return;
    const size_t start = out.size();
    switch (vocab_.model) {
        case TokenizerModel::Spm: spm_encode(vocab_, word, out); break;
        case TokenizerModel::Bpe: bpe_encode_word(vocab_, word, out); break;
        case TokenizerModel::Wpm: wpm_encode_word(vocab_, word, out); break;
    }
    if (cache_) cache_->insert(word, out.data() + start, out.size() - start);
}

void Tokenizer::encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
    switch (vocab_.model) {
        case TokenizerModel::Spm: {
            std::string escaped;
            escaped.reserve(text.size() + 16);
            if (vocab_.add_space_prefix && after_special) escaped += kSpaceMarker;
            for (char c : text) {
                if (c == ' ') {
                    escaped += kSpaceMarker;
                } else {
                    escaped += c;
                }
            }
            if (!vocab_.spm_splits_at_spaces) {
                spm_encode(vocab_, escaped, out);
                return;
            }
            // No token spans "x▁", so each run that starts at such a boundary is independent.
            // Boundaries are found on the same character steps spm_encode takes, so malformed
            // UTF-8 cannot shift them.
            const std::string_view all = escaped;
            size_t word_start = 0;
            bool prev_is_marker = false;
            for (size_t pos = 0; pos < all.size();) {
                const size_t len = std::min(utf8_sequence_length(uint8_t(all[pos])), all.size() - pos);
                const bool is_marker = all.compare(pos, len, kSpaceMarker) == 0;
                if (is_marker && !prev_is_marker && pos > word_start) {
                    encode_word(all.substr(word_start, pos - word_start), out);
                    word_start = pos;
                }
                prev_is_marker = is_marker;
                pos += len;
            }
            encode_word(all.substr(word_start), out);
            return;
        }
        case TokenizerModel::Bpe: {
            std::string repaired;
            if (!utf8_is_valid(text)) {
                repaired = utf8_sanitize(text);
                text = repaired;
            }
            std::vector<std::string_view> words;
            splitter_->split(text, words);
            for (std::string_view word : words) encode_word(word, out);
            return;
        }
        case TokenizerModel::Wpm: {
            for (const std::string& word : wpm_split_words(vocab_, text)) encode_word(word, out);
            return;
        }
    }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
    std::vector<int32_t> out;
    out.reserve(text.size() / 3 + 4);
    if (add_bos && vocab_.bos_id != kNoToken) out.push_back(vocab_.bos_id);
    if (text.empty()) return out;
    bool after_special = true;  // the start of the text counts as following a special token
    for (const Fragment& f : split_special(text, parse_special)) {
        if (f.token != kNoToken) {
            out.push_back(f.token);
            after_special = true;
        } else {
            encode_text(f.text, after_special, out);
            after_special = false;
        }
    }
    return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
    if (!vocab_.valid(id)) return {};
    const TokenData& t = vocab_.tokens[size_t(id)];
    if (t.attrs & (kAttrControl | kAttrUnknown)) return render_special ? t.text : std::string();
    if (t.attrs & kAttrUserDefined) return t.text;
    if (t.attrs & kAttrByte) {
        // "<0xNN>"
        if (t.text.size() == 6 && t.text.compare(0, 3, "<0x") == 0) {
            return std::string(1, char(std::stoi(t.text.substr(3, 2), nullptr, 16)));
        }
        return t.text;
    }
    if (!(t.attrs & kAttrNormal)) return {};  // unused / undefined tokens have no text
    if (vocab_.model == TokenizerModel::Bpe) return byte_level_decode(t.text);
    std::string piece;
    piece.reserve(t.text.size());
    const std::string_view text = t.text;
    for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, kSpaceMarker.size(), kSpaceMarker) == 0) {
            piece += ' ';
            pos += kSpaceMarker.size();
        } else {
            piece += text[pos++];
        }
    }
    return piece;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
    std::string out;
    // The space the encoder put in front of the text (SPM prefix, WordPiece word start).
    bool drop_leading_space =
        (vocab_.model == TokenizerModel::Spm && vocab_.add_space_prefix) || vocab_.model == TokenizerModel::Wpm;
    for (int32_t id : ids) {
        std::string piece = token_to_piece(id, render_special);
        if (piece.empty()) continue;
        if (drop_leading_space && piece[0] == ' ') piece.erase(0, 1);
        drop_leading_space = false;
        out += piece;
    }
    return out;
}

}  // namespace strata
