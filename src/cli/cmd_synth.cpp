// `strata synth`: write a synthetic model (real shapes and types, random weights) for benchmarks
// and smoke runs. See model/synth.h.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/progress.h"
#include "model/synth.h"

namespace strata::cli {
namespace {

struct SynthOptions {
    std::string preset = "tiny";
    std::string output;
    std::string vocab;
    double router_skew = 0.0;
    uint64_t seed = 1234;
    int layers = 0;
    std::string expert_type;  // empty: the preset's
};

int run_synth(const SynthOptions& o) {
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
    std::optional<GgufFile> vocab;
    if (!o.vocab.empty()) {
        auto v = GgufFile::open(o.vocab);
        if (!v) return report_failure("synth", v.status().message());
        vocab.emplace(std::move(*v));
    }
    ProgressBar bar("synth " + o.preset);
    Status s = write_synth_model(*spec, vocab ? &*vocab : nullptr, o.output,
                                 [&](uint64_t done, uint64_t total) { bar.update(done, total); });
    bar.finish();
    if (!s) return report_failure("synth", s.message());
    fmt::print(stderr, "wrote {}\n", o.output);
    return 0;
}

CommandRegistration registration("synth", "Write a synthetic model: real shapes and types, random weights",
                                 [](CLI::App& app) {
                                     auto o = std::make_shared<SynthOptions>();
                                     app.add_option("--preset", o->preset, "tiny | qwen3-30b-a3b")->capture_default_str();
                                     app.add_option("-o,--output", o->output, "GGUF file to write")->required();
                                     app.add_option("--vocab", o->vocab, "Copy the tokenizer from this GGUF");
                                     app.add_option("--router-skew", o->router_skew,
                                                    "Zipf exponent of expert popularity (0 = uniform)")
                                         ->check(CLI::Range(0.0, 8.0));
                                     app.add_option("--layers", o->layers, "Override the number of layers");
                                     app.add_option("--seed", o->seed, "Random seed")->capture_default_str();
                                     app.add_option("--expert-type", o->expert_type,
                                                    "Type of the routed experts' matrices (gate, up and down), "
                                                    "e.g. IQ2_XXS or Q2_0 (default: the preset's)");
                                     return [o] { return run_synth(*o); };
                                 });

}  // namespace
}  // namespace strata::cli
