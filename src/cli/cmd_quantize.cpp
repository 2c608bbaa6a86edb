// `strata quantize IN.gguf OUT.gguf --type Q4_K`: re-quantize a model's weight matrices with
// Strata's own quantizers (no importance matrix). See model/quantize_model.h for what changes.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/progress.h"
#include "model/quantize_model.h"

namespace strata::cli {
namespace {

struct QuantizeCliOptions {
    std::string input, output, type = "Q8_0";
    int threads = 0;
};

int run_quantize(const QuantizeCliOptions& o) {
    auto type = tensor_type_from_name(o.type);
    if (!type) return report_failure("quantize", fmt::format("--type: unknown type \"{}\" (e.g. Q8_0, Q4_K, Q6_K)", o.type));
    auto input = GgufFile::open(o.input);
    if (!input) return report_failure("quantize", input.status().message());
    ProgressBar bar("quantize " + o.type);
    Status s = quantize_model(*input, o.output, QuantizeOptions{.type = *type, .threads = o.threads},
                              [&](uint64_t done, uint64_t total) { bar.update(done, total); });
    bar.finish();
    if (!s) return report_failure("quantize", s.message());
    fmt::print(stderr, "wrote {}\n", o.output);
    return 0;
}

CommandRegistration registration("quantize", "Re-quantize a model's weights to another type", [](CLI::App& app) {
    auto o = std::make_shared<QuantizeCliOptions>();
    app.add_option("input", o->input, "GGUF model to read")->required();
    app.add_option("output", o->output, "GGUF file to write")->required();
    app.add_option("--type", o->type, "Target type: " + quantize_target_names())
        ->capture_default_str();
    app.add_option("-t,--threads", o->threads, "CPU threads (0: all)");
    return [o] { return run_quantize(*o); };
});

}  // namespace
}  // namespace strata::cli
