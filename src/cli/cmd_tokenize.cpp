// `strata tokenize` and `strata detokenize`: a model's tokenizer from the command line.
//
//   strata tokenize --model m.gguf --text "Hello world" --ids     ->  15043,3186
//   strata tokenize --model m.gguf --file prompt.txt --bos        ->  one "id<TAB>piece" line per token
//   strata detokenize --model m.gguf --ids 15043,3186             ->  Hello world
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <iterator>

#include "cli/command.h"
#include "core/file.h"
#include "gguf/reader.h"
#include "tokenizer/tokenizer.h"

namespace strata::cli {
namespace {

struct TokenizeOptions {
    std::string model;
    std::string text;
    std::string file;
    bool has_text = false;  // --text given (possibly empty)
    bool bos = false;
    bool special = false;
    bool ids_only = false;
};

struct DetokenizeOptions {
    std::string model;
    std::string ids;
    bool special = false;
};

Result<Tokenizer> load_tokenizer(const std::string& path) {
    STRATA_ASSIGN_OR_RETURN(GgufFile gguf, GgufFile::open(path));
    STRATA_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_gguf(gguf));
    for (const auto& w : tok.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
    return tok;
}

// A piece as readable text: escapes for control characters, backslash, and bytes that are not
// complete UTF-8 (a byte token may hold part of a character).
std::string printable(std::string_view piece) {
    std::string out;
    for (size_t i = 0; i < piece.size(); ++i) {
        const auto c = static_cast<unsigned char>(piece[i]);
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c == '\r') out += "\\r";
        else if (c == '\\') out += "\\\\";
        else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02X}", c);
        else if (c < 0x80) out += char(c);
        else {
            size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
            bool whole = len > 0 && i + len <= piece.size();
            for (size_t k = 1; whole && k < len; ++k) whole = (static_cast<unsigned char>(piece[i + k]) & 0xC0) == 0x80;
            if (whole) {
                out.append(piece.substr(i, len));
                i += len - 1;
            } else {
                out += fmt::format("\\x{:02X}", c);
            }
        }
    }
    return out;
}

int run_tokenize(const TokenizeOptions& opts) {
    std::string text = opts.text;
    if (!opts.file.empty()) {
        auto data = read_file_to_string(opts.file);
        if (!data) return report_failure("tokenize", data.status().message());
        text = std::move(*data);
    } else if (!opts.has_text) {
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    }
    auto tok = load_tokenizer(opts.model);
    if (!tok) return report_failure("tokenize", tok.status().message());
    const std::vector<int32_t> ids = tok->encode(text, opts.bos, opts.special);
    if (opts.ids_only) {
        fmt::print("{}\n", fmt::join(ids, ","));
        return 0;
    }
    for (int32_t id : ids) fmt::print("{}\t{}\n", id, printable(tok->token_to_piece(id, /*render_special=*/true)));
    return 0;
}

Result<std::vector<int32_t>> parse_ids(const std::string& list, size_t vocab_size) {
    std::vector<int32_t> ids;
    size_t pos = 0;
    while (pos < list.size()) {
        while (pos < list.size() && (list[pos] == ',' || list[pos] == ' ' || list[pos] == '\n' || list[pos] == '\t')) ++pos;
        if (pos >= list.size()) break;
        size_t end = pos;
        while (end < list.size() && list[end] != ',' && list[end] != ' ' && list[end] != '\n' && list[end] != '\t') ++end;
        const std::string item = list.substr(pos, end - pos);
        char* stop = nullptr;
        const long long v = std::strtoll(item.c_str(), &stop, 10);
        if (stop != item.c_str() + item.size() || v < 0 || uint64_t(v) >= vocab_size) {
            return Status::error("--ids: expected token ids from 0 to {} separated by commas, got {:?}", vocab_size - 1,
                                 item);
        }
        ids.push_back(int32_t(v));
        pos = end;
    }
    return ids;
}

int run_detokenize(const DetokenizeOptions& opts) {
    auto tok = load_tokenizer(opts.model);
    if (!tok) return report_failure("detokenize", tok.status().message());
    auto ids = parse_ids(opts.ids, tok->vocab_size());
    if (!ids) return report_failure("detokenize", ids.status().message());
    const std::string text = tok->decode(*ids, opts.special);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
}

CommandRegistration tokenize_registration(
    "tokenize", "Turn text into the model's token ids", [](CLI::App& app) {
        auto opts = std::make_shared<TokenizeOptions>();
        app.footer(
            "Output: one line per token, \"<id><TAB><piece>\", the piece with \\n, \\t, \\r, \\\\ and \\xNN escapes "
            "(\\xNN also for bytes of an incomplete UTF-8 character). With --ids: the ids on one line, "
            "comma-separated. Without --text or --file the text is read from standard input. By default no BOS "
            "is added and text that spells a control token (\"<|im_end|>\") is tokenized as plain text; "
            "user-defined tokens are always matched, as Hugging Face tokenizers do.");
        app.add_option("--model,-m", opts->model, "GGUF file whose tokenizer to use")->required();
        auto* text = app.add_option("--text,-t", opts->text, "Text to tokenize");
        app.add_option("--file,-f", opts->file, "File whose bytes to tokenize")->excludes(text);
        app.add_flag("--bos", opts->bos, "Put the BOS token first");
        app.add_flag("--special", opts->special, "Parse control-token text as special tokens");
        app.add_flag("--ids", opts->ids_only, "Print only the ids, comma-separated on one line");
        return [opts, text] {
            opts->has_text = text->count() > 0;
            return run_tokenize(*opts);
        };
    });

CommandRegistration detokenize_registration(
    "detokenize", "Turn token ids back into text", [](CLI::App& app) {
        auto opts = std::make_shared<DetokenizeOptions>();
        app.footer(
            "Prints the text the ids stand for, then one newline. Control tokens (BOS, EOS, ...) are left out "
            "unless --special. SentencePiece and WordPiece models drop the leading space their encoder adds.");
        app.add_option("--model,-m", opts->model, "GGUF file whose tokenizer to use")->required();
        app.add_option("--ids", opts->ids, "Token ids, comma-separated (e.g. 1,15043,3186)")->required();
        app.add_flag("--special", opts->special, "Print control tokens as their text");
        return [opts] { return run_detokenize(*opts); };
    });

}  // namespace
}  // namespace strata::cli
