// The regexes below are the pre-tokenizer definitions of the models' tokenizer.json files, as
// llama.cpp lists them per `tokenizer.ggml.pre` (src/llama-vocab.cpp). Where llama.cpp rewrote
// a regex for std::regex (case-insensitive groups, possessive quantifiers) the original is used:
// PCRE2 runs it as Hugging Face's Oniguruma does. Non-ASCII literals are written as \x{...}.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tokenizer/pretokenizer.h"

#include <algorithm>

#include "tokenizer/unicode_text.h"

namespace strata {
namespace {

// ---- regex sets ---------------------------------------------------------------------------

// GPT-2's ByteLevel regex (llama.cpp drops the trailing `|\s+`; the text between matches is kept
// as its own piece anyway, which gives the same pieces).
constexpr const char* kGpt2 = R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))re";
constexpr const char* kLlama3 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kQwen2 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
// The cased letters (Lu/Ll/Lt) of the Unicode version DeepSeek's tokenizer.json was made with.
constexpr const char* kDeepseekLlmLetters =
    R"re(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re";
constexpr const char* kDeepseekCjk = R"re([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";
constexpr const char* kDeepseek3Main =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr const char* kBloom = R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{964}\x{6D4}\x{60C})]+)re";

struct Preset {
    std::string_view name;
    std::vector<std::string_view> patterns;
};

const std::vector<Preset>& presets() {
    static const std::vector<Preset> table = {
        {"default", {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"}},
        {"gpt2", {kGpt2}},
        {"llama3", {kLlama3}},
        {"jais2",
         {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})re"}},
        {"deepseek-llm",
         {"[\r\n]", kDeepseekLlmLetters,
          R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re", R"re(\s+$)re",
          kDeepseekCjk, R"re(\p{N}+)re"}},
        {"deepseek-coder", {"[\r\n]", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kDeepseekCjk, R"re(\p{N})re"}},
        {"deepseek-v3", {R"re(\p{N}{1,3})re", R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re", kDeepseek3Main}},
        {"falcon",
         {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"}},
        {"starcoder", {R"re(\p{N})re", kGpt2}},
        {"qwen2", {kQwen2}},
        {"qwen35",
         {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"}},
        {"bloom", {kBloom}},
        {"viking", {kBloom, R"re(\p{N})re"}},
        {"tekken",
         {R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"}},
        {"chameleon",
         {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", R"re(([\t\n]|    |  ))re", R"re(\p{N})re",
          R"re([\p{P}!-/:-@\[-`{-~])re", kGpt2}},
        {"gpt-4o", {kGpt4o}},
        {"tiny_aya", {R"re(\d{1,3}(?=(?:\d{3})*\b))re", kGpt4o}},
        {"superbpe", {R"re(\p{N}+)re", R"re((?=(\d{3})+(?!\d)))re"}},
        {"bailingmoe",
         {R"re('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re"}},
        {"seed-coder",
         {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re"}},
        {"ufakzeka", {R"re([^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"}},
        {"exaone-moe",
         {R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re"}},
        {"laguna", {R"re([^\n]+|[\n]+)re", kQwen2}},
        {"minicpm5",
         {R"re(\p{N}{1,3})re",
          R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re"}},
    };
    return table;
}

// Which preset each `tokenizer.ggml.pre` value selects, with its flags (llama.cpp's table).
struct NameEntry {
    std::string_view name;
    std::string_view preset;
    bool ignore_merges = false;
    bool clean_spaces = true;
    int add_bos = -1;  // -1: not set by the name
    bool has_bos = true;
};

const std::vector<NameEntry>& name_table() {
    static const std::vector<NameEntry> table = {
        {"default", "default"},
        {"llama3", "llama3", true, true, 1},       {"llama-v3", "llama3", true, true, 1},
        {"llama-bpe", "llama3", true, true, 1},    {"falcon3", "llama3", true, true, 1},
        {"falcon-h1", "llama3", true, true, 1},    {"pixtral", "llama3", true, true, 1},
        {"midm-2.0", "llama3", true, true, 1},     {"lfm2", "llama3", true, true, 1},
        {"jina-v5-nano", "llama3", true, true, 1},
        {"dbrx", "llama3"},                        {"smaug-bpe", "llama3"},
        {"jais-2", "jais2"},
        {"deepseek-llm", "deepseek-llm", false, false},
        {"deepseek-coder", "deepseek-coder", false, false},
        {"deepseek-v3", "deepseek-v3", false, false},
        {"hunyuan-dense", "deepseek-v3", false, false},
        {"joyai-llm", "deepseek-v3", false, false},
        {"hy_v4", "deepseek-v3", false, false},
        {"falcon", "falcon"},
        {"mpt", "gpt2"},                           {"olmo", "gpt2"},
        {"jais", "gpt2"},                          {"trillion", "gpt2", false, false},
        {"granite-docling", "gpt2", false, false},
        {"gpt-2", "gpt2"},                         {"phi-2", "gpt2"},
        {"jina-es", "gpt2"},                       {"jina-de", "gpt2"},
        {"gigachat", "gpt2"},                      {"jina-v2-es", "gpt2"},
        {"jina-v2-de", "gpt2"},                    {"a.x-4.0", "gpt2"},
        {"mellum", "gpt2"},                        {"modern-bert", "gpt2"},
        {"jina-v1-en", "gpt2"},                    {"jina-v2-code", "gpt2"},
        {"roberta-bpe", "gpt2"},                   {"exaone4", "gpt2"},
        {"starcoder", "starcoder"},                {"refact", "starcoder"},
        {"command-r", "starcoder", false, false},  {"smollm", "starcoder", false, false},
        {"codeshell", "starcoder"},                {"exaone", "starcoder"},
        {"minerva-7b", "starcoder"},               {"mellum2", "starcoder"},
        {"qwen2", "qwen2", false, false},          {"deepseek-r1-qwen", "qwen2", false, false},
        {"kormo", "qwen2", false, false},          {"f2llmv2", "qwen2", false, false},
        {"megrez", "qwen2"},                       {"stablelm2", "qwen2"},
        {"hunyuan", "qwen2", false, false},        {"solar-open", "qwen2", false, false},
        {"grok-2", "qwen2", false, false},
        {"qwen35", "qwen35", false, false},
        {"poro-chat", "bloom", false, false},      {"bloom", "bloom"},
        {"gpt3-finnish", "bloom"},
        {"glm4", "llama3", false, true, -1, false}, {"chatglm-bpe", "llama3", false, true, -1, false},
        {"viking", "viking", false, false},
        {"tekken", "tekken", true, false, 1},
        {"chameleon", "chameleon", false, false, 1},
        {"gpt-4o", "gpt-4o", false, false},        {"llama4", "gpt-4o", false, false},
        {"kanana2", "gpt-4o", false, false},       {"talkie", "gpt-4o", false, false},
        {"minimax-m2", "gpt-4o", false, false},
        {"tiny_aya", "tiny_aya", false, false},    {"cohere2moe", "tiny_aya", false, false},
        {"superbpe", "superbpe", false, false},
        {"bailingmoe", "bailingmoe", false, false}, {"bailingmoe2", "bailingmoe", false, false},
        {"llada-moe", "bailingmoe", false, false},
        {"seed-coder", "seed-coder", false, false},
        {"ufakzeka", "ufakzeka", false, false},
        {"exaone-moe", "exaone-moe"},
        {"laguna", "laguna", false, false},
        {"minicpm5", "minicpm5", true},
    };
    return table;
}

const Preset& find_preset(std::string_view name) {
    for (const auto& p : presets()) {
        if (p.name == name) return p;
    }
    STRATA_CHECK(false, "pre-tokenizer name table refers to a preset that does not exist");
    return presets().front();
}

// PCRE2's `\s` is "Z or tab/LF/VT/FF/CR", which misses U+0085; Hugging Face (Oniguruma) and
// llama.cpp use the White_Space property. Rewrite the escapes to the property itself.
std::string with_white_space_property(std::string_view pattern) {
    std::string out;
    out.reserve(pattern.size() + 32);
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\' && i + 1 < pattern.size()) {
            const char next = pattern[i + 1];
            if (next == 's') {
                out += "\\p{White_Space}";
            } else if (next == 'S') {
                out += "\\P{White_Space}";
            } else {
                out += pattern.substr(i, 2);
            }
            ++i;
        } else {
            out += pattern[i];
        }
    }
    return out;
}

// Matching scratch that cannot be shared between threads: the match data and the JIT stack
// (creating a JIT stack maps memory, too slow to do per word). One set per thread, reused by
// every splitter.
struct MatchScratch {
    pcre2_match_data* data = nullptr;
    pcre2_match_context* context = nullptr;
    pcre2_jit_stack* jit_stack = nullptr;

    MatchScratch() {
        data = pcre2_match_data_create(1, nullptr);  // only the whole match is needed
        context = pcre2_match_context_create(nullptr);
        jit_stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
        if (context && jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
        STRATA_CHECK(data && context, "out of memory creating PCRE2 match data");
    }
    ~MatchScratch() {
        pcre2_jit_stack_free(jit_stack);
        pcre2_match_context_free(context);
        pcre2_match_data_free(data);
    }
    MatchScratch(const MatchScratch&) = delete;
    MatchScratch& operator=(const MatchScratch&) = delete;
};

MatchScratch& thread_scratch() {
    thread_local MatchScratch scratch;
    return scratch;
}

}  // namespace

PreTokenizerConfig pre_tokenizer_config(std::string_view pre_name) {
    PreTokenizerConfig cfg;
    cfg.name = std::string(pre_name);
    const NameEntry* entry = nullptr;
    for (const auto& e : name_table()) {
        if (e.name == pre_name) entry = &e;
    }
    NameEntry fallback{"default", "default"};
    if (!entry) {
        cfg.known = false;
        entry = &fallback;
    }
    cfg.preset = std::string(entry->preset);
    for (auto p : find_preset(entry->preset).patterns) cfg.patterns.emplace_back(p);
    cfg.ignore_merges = entry->ignore_merges;
    cfg.clean_spaces = entry->clean_spaces;
    if (entry->add_bos >= 0) cfg.add_bos = entry->add_bos == 1;
    cfg.has_bos = entry->has_bos;
    return cfg;
}

std::vector<std::string> supported_pre_tokenizer_names() {
    std::vector<std::string> names;
    for (const auto& e : name_table()) names.emplace_back(e.name);
    std::sort(names.begin(), names.end());
    return names;
}

// ---- RegexSplitter ------------------------------------------------------------------------

struct RegexSplitter::Pattern {
    pcre2_code* code = nullptr;
    explicit Pattern(pcre2_code* c) : code(c) {}
    ~Pattern() { pcre2_code_free(code); }
    Pattern(const Pattern&) = delete;
    Pattern& operator=(const Pattern&) = delete;
};

RegexSplitter::RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;
RegexSplitter::~RegexSplitter() = default;

Result<RegexSplitter> RegexSplitter::compile(const std::vector<std::string>& patterns) {
    RegexSplitter splitter;
    for (const auto& source : patterns) {
        const std::string pattern = with_white_space_property(source);
        int error_code = 0;
        PCRE2_SIZE error_offset = 0;
        // DOLLAR_ENDONLY: `$` is the end of the piece, not also "before a final newline".
        const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY | PCRE2_NO_UTF_CHECK;
        pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                                         &error_code, &error_offset, nullptr);
        if (!code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error_code, message, sizeof(message));
            return Status::error("pre-tokenizer regex does not compile: {} at offset {} of {:?}",
                                 reinterpret_cast<const char*>(message), error_offset, source);
        }
        // Without JIT support PCRE2 interprets the pattern: slower, same results.
        (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
        splitter.patterns_.push_back(std::make_unique<Pattern>(code));
    }
    return splitter;
}

namespace {

// Splits one piece with one pattern, appending the pieces (matches and the gaps between them).
void split_piece(const pcre2_code* code, std::string_view piece, MatchScratch& scratch,
                 std::vector<std::string_view>& out) {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.data);
    size_t search_from = 0;
    size_t piece_start = 0;  // start of the text not yet emitted
    uint32_t retry_options = 0;
    while (search_from <= piece.size()) {
        const int rc = pcre2_match(code, subject, piece.size(), search_from, retry_options | PCRE2_NO_UTF_CHECK,
                                   scratch.data, scratch.context);
        if (rc < 0) {
            if (retry_options != 0 && rc == PCRE2_ERROR_NOMATCH) {
                // No non-empty match where the empty one was: move on by one character.
                retry_options = 0;
                if (search_from >= piece.size()) break;
                search_from += utf8_sequence_length(static_cast<uint8_t>(piece[search_from]));
                continue;
            }
            break;  // no more matches (or a resource limit: the rest stays one piece)
        }
        const size_t begin = ovector[0];
        const size_t end = ovector[1];
        if (begin > piece_start) out.push_back(piece.substr(piece_start, begin - piece_start));
        if (end > begin) out.push_back(piece.substr(begin, end - begin));
        piece_start = end;
        search_from = end;
        // After an empty match, look for a non-empty one at the same place before moving on
        // (what std::regex_iterator and Oniguruma's find_iter do).
        retry_options = end == begin ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
    }
    if (piece_start < piece.size()) out.push_back(piece.substr(piece_start));
}

}  // namespace

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& pieces) const {
    if (text.empty()) return;
    if (patterns_.empty()) {
        pieces.push_back(text);
        return;
    }
    MatchScratch& scratch = thread_scratch();
    std::vector<std::string_view> current{text};
    std::vector<std::string_view> next;
    for (size_t i = 0; i < patterns_.size(); ++i) {
        std::vector<std::string_view>& target = i + 1 == patterns_.size() ? pieces : next;
        if (&target == &next) next.clear();
        for (std::string_view piece : current) split_piece(patterns_[i]->code, piece, scratch, target);
        if (&target == &next) current.swap(next);
    }
}

}  // namespace strata
