#include "tokenizer/vocab.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gguf/reader.h"
#include "tokenizer/unicode_text.h"

namespace strata {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// GGUF token types (tokenizer.ggml.token_type).
uint32_t attrs_from_token_type(int64_t type) {
    switch (type) {
        case 1: return kAttrNormal;
        case 2: return kAttrUnknown;
        case 3: return kAttrControl;
        case 4: return kAttrUserDefined;
        case 5: return kAttrUnused;
        case 6: return kAttrByte;
        default: return kAttrUndefined;
    }
}

Result<const GgufArray*> optional_array(const GgufFile& gguf, const std::string& key, size_t min_items) {
    const GgufValue* v = gguf.find(key);
    if (!v) return static_cast<const GgufArray*>(nullptr);
    if (!v->is_array()) {
        return Status::error("{}: expected an array, got {}", key, gguf_value_type_name(v->type));
    }
    const GgufArray& arr = v->as_array();
    if (arr.items.size() < min_items) {
        return Status::error("{}: expected at least {} items (one per token), got {}", key, min_items,
                             arr.items.size());
    }
    return &arr;
}

// The token texts and their attributes; also builds the text index.
Status load_tokens(const GgufFile& gguf, Vocab& vocab) {
    const GgufValue* list = gguf.find("tokenizer.ggml.tokens");
    if (!list) return Status::error("tokenizer.ggml.tokens: missing (the file has no vocabulary)");
    if (!list->is_array() || list->as_array().element_type != GgufValueType::STRING) {
        return Status::error("tokenizer.ggml.tokens: expected an array of strings, got {}",
                             gguf_value_type_name(list->type));
    }
    const auto& items = list->as_array().items;
    if (items.empty() || items.size() > size_t(INT32_MAX)) {
        return Status::error("tokenizer.ggml.tokens: expected 1 to 2^31-1 tokens, got {}", items.size());
    }
    STRATA_ASSIGN_OR_RETURN(const GgufArray* scores, optional_array(gguf, "tokenizer.ggml.scores", items.size()));
    STRATA_ASSIGN_OR_RETURN(const GgufArray* types, optional_array(gguf, "tokenizer.ggml.token_type", items.size()));
    if (scores && !(scores->items.empty() || scores->items[0].is_float() || scores->items[0].is_integer())) {
        return Status::error("tokenizer.ggml.scores: expected numbers, got {}",
                             gguf_value_type_name(scores->element_type));
    }
    if (types && !types->items.empty() && !types->items[0].is_integer()) {
        return Status::error("tokenizer.ggml.token_type: expected integers, got {}",
                             gguf_value_type_name(types->element_type));
    }

    vocab.tokens.resize(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        TokenData& t = vocab.tokens[i];
        t.text = items[i].as_string();
        if (t.text.empty()) {
            vocab.warnings.push_back(fmt::format("token {} has empty text; named [EMPTY_{}]", i, i));
            t.text = fmt::format("[EMPTY_{}]", i);
        }
        if (scores) t.score = static_cast<float>(scores->items[i].as_float());
        if (types) t.attrs = attrs_from_token_type(types->items[i].as_int());
        vocab.max_token_bytes = std::max(vocab.max_token_bytes, t.text.size());
    }
    vocab.index.reserve(items.size());
    for (size_t i = 0; i < vocab.tokens.size(); ++i) {
        auto [it, inserted] = vocab.index.emplace(vocab.tokens[i].text, int32_t(i));
        if (!inserted) {
            return Status::error("tokenizer.ggml.tokens: duplicate token {:?} at ids {} and {} (re-convert the model)",
                                 vocab.tokens[i].text, it->second, i);
        }
    }
    return Status::ok();
}

Status load_merges(const GgufFile& gguf, Vocab& vocab) {
    const GgufValue* list = gguf.find("tokenizer.ggml.merges");
    if (!list) return Status::error("tokenizer.ggml.merges: missing, but a gpt2 (BPE) vocabulary needs it");
    if (!list->is_array() || list->as_array().element_type != GgufValueType::STRING) {
        return Status::error("tokenizer.ggml.merges: expected an array of strings, got {}",
                             gguf_value_type_name(list->type));
    }
    const auto& items = list->as_array().items;
    vocab.merges.reserve(items.size());
    size_t unusable = 0;
    std::string joined;
    for (size_t rank = 0; rank < items.size(); ++rank) {
        const std::string& line = items[rank].as_string();
        // "left right"; the separator is searched from index 1 so that a left part may be a space.
        const size_t sep = line.find(' ', 1);
        if (sep == std::string::npos) {
            ++unusable;
            continue;
        }
        const std::string_view left = std::string_view(line).substr(0, sep);
        const std::string_view right = std::string_view(line).substr(sep + 1);
        joined.assign(left);
        joined += right;
        const int32_t l = vocab.find(left), r = vocab.find(right), result = vocab.find(joined);
        if (l == kNoToken || r == kNoToken || result == kNoToken) {
            ++unusable;
            continue;
        }
        vocab.merges.emplace((uint64_t(uint32_t(l)) << 32) | uint32_t(r), BpeMerge{int32_t(rank), result});
    }
    if (unusable > 0) {
        vocab.warnings.push_back(
            fmt::format("{} of {} BPE merges name tokens that are not in the vocabulary; ignored", unusable, items.size()));
    }
    return Status::ok();
}

// Reads an optional token id key; out-of-range values keep the default, with a warning.
void read_token_id(const GgufFile& gguf, const std::string& key, Vocab& vocab, int32_t& id) {
    if (!vocab.valid(id)) id = kNoToken;
    const GgufValue* v = gguf.find(key);
    if (!v) return;
    if (!v->is_integer()) {
        vocab.warnings.push_back(fmt::format("{}: expected an integer, got {}; ignored", key, gguf_value_type_name(v->type)));
        return;
    }
    const int64_t value = v->as_int();
    if (value < 0 || uint64_t(value) >= vocab.size()) {
        vocab.warnings.push_back(fmt::format("{} = {} is outside the vocabulary (size {}); ignored", key, value, vocab.size()));
        return;
    }
    id = int32_t(value);
}

void read_flag(const GgufFile& gguf, const std::string& key, bool& flag) {
    const GgufValue* v = gguf.find(key);
    if (v && (v->is_bool() || v->is_integer())) flag = v->as_int() != 0;
}

// Some GGUFs mark end-of-turn tokens as normal or user-defined; llama.cpp recognizes them by
// text and makes them control tokens, so that they are only parsed as special when asked.
void detect_end_of_turn(Vocab& vocab) {
    static constexpr std::string_view kEndOfTurn[] = {
        "<|eot_id|>",   "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
        "<EOT>",        "_<EOT>",     "[EOT]",   "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
        "<end_of_utterance>",
    };
    if (vocab.eot_id != kNoToken) return;
    for (std::string_view text : kEndOfTurn) {
        const int32_t id = vocab.find(text);
        if (id == kNoToken) continue;
        vocab.eot_id = id;
        vocab.tokens[size_t(id)].attrs |= kAttrControl;
        return;
    }
}

// Per-model strip attributes that GGUF does not carry (llama.cpp sets them by name).
void apply_model_token_attrs(const GgufFile& gguf, Vocab& vocab) {
    std::string name = gguf.get_string("general.name", "");
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    const std::string& pre = vocab.pre.name;
    if (pre.find("jina-v2-") != std::string::npos) {
        const int32_t mask = vocab.find("<mask>");
        if (mask != kNoToken) vocab.tokens[size_t(mask)].attrs |= kAttrLStrip;
    } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        // Phi-3's chat tokens eat the newline after them, as its HF tokenizer does.
        for (int32_t id : vocab.special_tokens) vocab.tokens[size_t(id)].attrs |= kAttrRStrip;
        if (int32_t id = vocab.find("</s>"); id != kNoToken) vocab.tokens[size_t(id)].attrs |= kAttrRStrip;
        for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) {
            if (int32_t id = vocab.find(text); id != kNoToken) vocab.tokens[size_t(id)].attrs &= ~uint32_t(kAttrRStrip);
        }
    }
}

void build_byte_tokens(Vocab& vocab) {
    for (int b = 0; b < 256; ++b) {
        int32_t id = kNoToken;
        if (vocab.model == TokenizerModel::Spm) {
            id = vocab.find(fmt::format("<0x{:02X}>", b));
            if (id == kNoToken) id = vocab.find(std::string(1, char(b)));
        } else {
            id = vocab.find(byte_level_char(uint8_t(b)));
        }
        vocab.byte_tokens[size_t(b)] = id;
    }
}

bool no_marker_after_other_char(const Vocab& vocab) {
    for (const auto& t : vocab.tokens) {
        const std::string_view text = t.text;
        for (size_t pos = text.find(kSpaceMarker, 1); pos != std::string_view::npos;
             pos = text.find(kSpaceMarker, pos + 1)) {
            if (pos < kSpaceMarker.size() || text.substr(pos - kSpaceMarker.size(), kSpaceMarker.size()) != kSpaceMarker) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

Result<Vocab> Vocab::from_gguf(const GgufFile& gguf) {
    Vocab vocab;
    const GgufValue* model_value = gguf.find("tokenizer.ggml.model");
    if (!model_value || !model_value->is_string()) {
        return Status::error("tokenizer.ggml.model: expected a string (llama, gpt2 or bert), got {}",
                             model_value ? std::string(gguf_value_type_name(model_value->type)) : "nothing");
    }
    vocab.model_name = model_value->as_string();
    const std::string pre_name = gguf.get_string("tokenizer.ggml.pre", "");

    // Per-model defaults, as llama.cpp sets them before reading the keys.
    if (vocab.model_name == "llama") {
        vocab.model = TokenizerModel::Spm;
        vocab.bos_id = 1, vocab.eos_id = 2, vocab.unk_id = 0;
        vocab.add_space_prefix = true;
        vocab.add_bos = true;
    } else if (vocab.model_name == "gpt2") {
        vocab.model = TokenizerModel::Bpe;
        vocab.bos_id = 11, vocab.eos_id = 11;
        vocab.pre = pre_tokenizer_config(pre_name);
        if (!vocab.pre.known) {
            vocab.warnings.push_back(fmt::format(
                "tokenizer.ggml.pre {:?} is not a known pre-tokenizer: using 'default' (generation quality may "
                "suffer; re-convert the model with a current converter)",
                pre_name));
        }
        vocab.add_bos = vocab.pre.add_bos.value_or(false);
        if (!vocab.pre.has_bos) vocab.bos_id = kNoToken;
    } else if (vocab.model_name == "bert") {
        vocab.model = TokenizerModel::Wpm;
        vocab.bos_id = 101, vocab.unk_id = 100, vocab.sep_id = 102, vocab.pad_id = 0, vocab.mask_id = 103;
        vocab.add_bos = true;
    } else {
        return Status::error("tokenizer.ggml.model: expected llama (SentencePiece), gpt2 (BPE) or bert (WordPiece), "
                             "got {:?}",
                             vocab.model_name);
    }
    if (vocab.model != TokenizerModel::Bpe) vocab.pre.name = pre_name;
    read_flag(gguf, "tokenizer.ggml.add_space_prefix", vocab.add_space_prefix);
    read_flag(gguf, "tokenizer.ggml.remove_extra_whitespaces", vocab.remove_extra_whitespaces);

    STRATA_TRY(load_tokens(gguf, vocab));
    if (vocab.model == TokenizerModel::Bpe) STRATA_TRY(load_merges(gguf, vocab));

    read_token_id(gguf, "tokenizer.ggml.bos_token_id", vocab, vocab.bos_id);
    if (vocab.model == TokenizerModel::Wpm && !gguf.find("tokenizer.ggml.bos_token_id")) {
        read_token_id(gguf, "tokenizer.ggml.cls_token_id", vocab, vocab.bos_id);  // older BERT conversions
    }
    read_token_id(gguf, "tokenizer.ggml.eos_token_id", vocab, vocab.eos_id);
    read_token_id(gguf, "tokenizer.ggml.eot_token_id", vocab, vocab.eot_id);
    read_token_id(gguf, "tokenizer.ggml.unknown_token_id", vocab, vocab.unk_id);
    read_token_id(gguf, "tokenizer.ggml.seperator_token_id", vocab, vocab.sep_id);  // sic: the GGUF key
    read_token_id(gguf, "tokenizer.ggml.padding_token_id", vocab, vocab.pad_id);
    read_token_id(gguf, "tokenizer.ggml.mask_token_id", vocab, vocab.mask_id);
    read_flag(gguf, "tokenizer.ggml.add_bos_token", vocab.add_bos);
    read_flag(gguf, "tokenizer.ggml.add_eos_token", vocab.add_eos);
    read_flag(gguf, "tokenizer.ggml.normalizer.lowercase", vocab.lowercase);
    vocab.strip_accents = vocab.lowercase;
    read_flag(gguf, "tokenizer.ggml.normalizer.strip_accents", vocab.strip_accents);
    if (vocab.add_bos && vocab.bos_id == kNoToken) {
        vocab.warnings.push_back("tokenizer.ggml.add_bos_token is true but the vocabulary has no BOS token");
        vocab.add_bos = false;
    }
    detect_end_of_turn(vocab);

    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        if (vocab.tokens[id].attrs & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
            vocab.special_tokens.push_back(int32_t(id));
        }
    }
    std::stable_sort(vocab.special_tokens.begin(), vocab.special_tokens.end(), [&](int32_t a, int32_t b) {
        return vocab.tokens[size_t(a)].text.size() > vocab.tokens[size_t(b)].text.size();
    });
    apply_model_token_attrs(gguf, vocab);
    build_byte_tokens(vocab);
    if (vocab.model == TokenizerModel::Spm) vocab.spm_splits_at_spaces = no_marker_after_other_char(vocab);
    return vocab;
}

}  // namespace strata
