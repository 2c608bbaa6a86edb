// `strata synth`: write a synthetic model (real shapes and types, random weights) for benchmarks
// and smoke runs. See model/synth.h and, for --preset qwen3.8-flash-next and deepseek-v4-flash,
// model/synth_qwen4exp.h and model/synth_deepseek4.h.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/progress.h"
#include "model/synth.h"
#include "model/synth_deepseek4.h"
#include "model/synth_qwen4exp.h"

namespace strata::cli {
namespace {

constexpr const char* kFlashNext = "qwen3.8-flash-next";
constexpr const char* kV4Flash = "deepseek-v4-flash";

struct SynthOptions {
    std::string preset = "tiny";
    std::string output;
    std::string vocab;
    double router_skew = 0.0;
    uint64_t seed = 1234;
    int layers = 0;
    std::string expert_type;  // empty: the preset's
    // qwen3.8-flash-next and deepseek-v4-flash
    std::string mix;  // empty: the preset's first
    uint64_t ple_rows = 0;
    uint32_t experts = 0;
    uint32_t vocab_size = 0;
    std::string mtp = "none";
};

Result<std::optional<GgufFile>> open_vocab(const SynthOptions& o) {
    if (o.vocab.empty()) return std::optional<GgufFile>{};
    STRATA_ASSIGN_OR_RETURN(GgufFile v, GgufFile::open(o.vocab));
    return std::optional<GgufFile>(std::move(v));
}

int run_flash_next(const SynthOptions& o) {
    if (!o.expert_type.empty()) {
        return report_failure("synth", "--expert-type: qwen3.8-flash-next takes its types from --mix (see --help)");
    }
    Qwen4ExpSynthSpec spec;
    if (!o.mix.empty()) spec.mix = o.mix;
    if (o.layers > 0) spec.n_layers = static_cast<uint32_t>(o.layers);
    spec.n_expert = o.experts;
    if (o.vocab_size > 0) spec.n_vocab = o.vocab_size;
    spec.ple_rows = o.ple_rows;
    spec.seed = o.seed;
    spec.router_skew = o.router_skew;
    auto vocab = open_vocab(o);
    if (!vocab) return report_failure("synth", vocab.status().message());
    const GgufFile* v = *vocab ? &**vocab : nullptr;
    auto files = qwen4exp_trunk_plan(spec, v);
    if (!files) return report_failure("synth", files.status().message());
    std::vector<std::string> paths = qwen4exp_shard_paths(o.output, files->size());
    if (o.mtp != "none") {
        auto mtp = qwen4exp_mtp_plan(spec, v, o.mtp == "file");
        if (!mtp) return report_failure("synth", mtp.status().message());
        files->push_back(std::move(*mtp));
        paths.push_back(qwen4exp_mtp_path(o.output));
    }
    ProgressBar bar(fmt::format("synth {} {}", kFlashNext, spec.mix));
    Status s = write_synth_files(*files, paths, {.seed = o.seed, .router_skew = o.router_skew},
                                 [&](uint64_t done, uint64_t total) { bar.update(done, total); });
    bar.finish();
    if (!s) return report_failure("synth", s.message());
    for (const auto& p : paths) fmt::print(stderr, "wrote {}\n", p);
    return 0;
}

int run_v4_flash(const SynthOptions& o) {
    if (!o.expert_type.empty()) {
        return report_failure("synth", "--expert-type: deepseek-v4-flash takes its types from --mix (see --help)");
    }
    if (o.ple_rows != 0 || o.mtp != "none") return report_failure("synth", "--ple-rows and --mtp are qwen3.8-flash-next's");
    Deepseek4SynthSpec spec;
    if (!o.mix.empty()) spec.mix = o.mix;
    if (o.layers > 0) spec.n_layers = static_cast<uint32_t>(o.layers);
    if (o.experts > 0) spec.n_expert = o.experts;
    if (o.vocab_size > 0) spec.n_vocab = o.vocab_size;
    spec.seed = o.seed;
    spec.router_skew = o.router_skew;
    auto vocab = open_vocab(o);
    if (!vocab) return report_failure("synth", vocab.status().message());
    auto file = deepseek4_plan(spec, *vocab ? &**vocab : nullptr);
    if (!file) return report_failure("synth", file.status().message());
    ProgressBar bar(fmt::format("synth {} {}", kV4Flash, spec.mix));
    Status s = write_synth_files({*file}, {o.output}, {.seed = o.seed, .router_skew = o.router_skew},
                                 [&](uint64_t done, uint64_t total) { bar.update(done, total); });
    bar.finish();
    if (!s) return report_failure("synth", s.message());
    fmt::print(stderr, "wrote {}\n", o.output);
    return 0;
}

int run_synth(const SynthOptions& o) {
    if (o.preset == kFlashNext) return run_flash_next(o);
    if (o.preset == kV4Flash) return run_v4_flash(o);
    if (o.ple_rows != 0 || o.experts != 0 || o.vocab_size != 0 || o.mtp != "none" || !o.mix.empty()) {
        return report_failure("synth", fmt::format("--mix, --ple-rows, --experts, --vocab-size and --mtp: expected "
                                                   "--preset {} or {}, got --preset {}",
                                                   kFlashNext, kV4Flash, o.preset));
    }
    auto spec = synth_preset(o.preset);
    if (!spec) return report_failure("synth", spec.status().message());
    spec->router_skew = o.router_skew;
    spec->seed = o.seed;
    if (o.layers > 0) spec->n_layers = static_cast<uint32_t>(o.layers);
    if (!o.expert_type.empty()) {
        const auto type = tensor_type_from_name(o.expert_type);
        if (!type) return report_failure("synth", fmt::format("--expert-type: unknown type \"{}\" (e.g. IQ2_XXS, Q2_0)", o.expert_type));
        spec->type_expert_gate_up = spec->type_expert_down = *type;
    }
    auto vocab = open_vocab(o);
    if (!vocab) return report_failure("synth", vocab.status().message());
    ProgressBar bar("synth " + o.preset);
    Status s = write_synth_model(*spec, *vocab ? &**vocab : nullptr, o.output,
                                 [&](uint64_t done, uint64_t total) { bar.update(done, total); });
    bar.finish();
    if (!s) return report_failure("synth", s.message());
    fmt::print(stderr, "wrote {}\n", o.output);
    return 0;
}

std::string mix_help() {
    std::string h = "qwen3.8-flash-next: which published file's tensor types to copy. ";
    for (const auto& m : qwen4exp_mixes()) h += fmt::format("{}: {}. ", m.name, m.facts);
    h += "Details: docs/SYNTH_QWEN4EXP.md. deepseek-v4-flash (default ds4-q2): ";
    for (const auto& m : deepseek4_mixes()) h += fmt::format("{}: {}. ", m.name, m.facts);
    return h;
}

CommandRegistration registration(
    "synth", "Write a synthetic model: real shapes and types, random weights", [](CLI::App& app) {
        auto o = std::make_shared<SynthOptions>();
        app.add_option("--preset", o->preset, "tiny | qwen3-30b-a3b | qwen3.8-flash-next | deepseek-v4-flash")->capture_default_str();
        app.add_option("-o,--output", o->output,
                       "GGUF file to write (qwen3.8-flash-next: NAME.gguf gives NAME-00001-of-00002.gguf and "
                       "NAME-00002-of-00002.gguf, the PLE table alone in the second, as the published files)")
            ->required();
        app.add_option("--vocab", o->vocab, "Copy the tokenizer from this GGUF");
        app.add_option("--router-skew", o->router_skew, "Zipf exponent of expert popularity (0 = uniform)")
            ->check(CLI::Range(0.0, 8.0));
        app.add_option("--layers", o->layers,
                       "Override the number of layers (qwen3.8-flash-next: >= 2; every 4th block stays QSA, block 1 "
                       "the PLE block; deepseek-v4-flash: >= 4, compress ratios 0, 0, 4, 128, 4, ...)");
        app.add_option("--seed", o->seed, "Random seed")->capture_default_str();
        app.add_option("--expert-type", o->expert_type,
                       "Type of the routed experts' matrices (gate, up and down), e.g. IQ2_XXS or Q2_0 (default: the "
                       "preset's)");
        app.add_option("--mix", o->mix, mix_help())->capture_default_str();
        app.add_option("--ple-rows", o->ple_rows,
                       "qwen3.8-flash-next: at most this many PLE table rows (default the published 320,001,536); the "
                       "16 hash heads' primes start lower so every hashed row exists (ple.head_vocab_sizes and "
                       "ple.head_offsets change, nothing else)");
        app.add_option("--experts", o->experts,
                       "qwen3.8-flash-next: routed experts per block (default the mix's: 512, the Coder 256); top-10 "
                       "or all when fewer. deepseek-v4-flash: default 256, top-6");
        app.add_option("--vocab-size", o->vocab_size,
                       "qwen3.8-flash-next without --vocab: tokens (default the published 248,320; >= 1024): byte "
                       "tokens, placeholders, and the end-of-turn and image tokens 276 and 264 before the end. "
                       "deepseek-v4-flash: default 129,280, >= 512, the three control tokens at the end");
        app.add_option("--mtp", o->mtp,
                       "qwen3.8-flash-next: also write the MTP sidecar NAME-mtp.gguf as unsloth publishes it: file "
                       "(34 tensors, its own embeddings and head), shared (32, without them), none")
            ->check(CLI::IsMember({"none", "file", "shared"}))
            ->capture_default_str();
        return [o] { return run_synth(*o); };
    });

}  // namespace
}  // namespace strata::cli
