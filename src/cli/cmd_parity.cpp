// `strata parity -m MODEL.gguf --ref MODEL.ref.gguf [--chunk N]`: the engine's logits against a
// reference (HF transformers) file: normalized MSE, largest difference, arg-max agreement.
#include <fmt/format.h>

#include "cli/command.h"
#include "model/parity.h"

namespace strata::cli {
namespace {

struct ParityOptions {
    std::string model, ref;
    int64_t chunk = 0;
    int threads = 0;
    double max_nmse = 1e-5;
};

int run_parity_command(const ParityOptions& o) {
    ThreadPool pool(ThreadPool::Options{.threads = o.threads});
    auto r = run_parity(o.model, o.ref, o.chunk, pool);
    if (!r) return report_failure("parity", r.status().message());
    bool ok = r->nmse <= o.max_nmse;
    fmt::print("{}: {} tokens, vocabulary {}, {}\n", o.model, r->n_tokens, r->n_vocab,
               o.chunk > 0 ? fmt::format("{} token(s) per step", o.chunk) : std::string("one batch"));
    fmt::print("  nmse {:.3e} (limit {:.1e})  max |diff| {:.3e}  top-1 agreement {}/{}  {}\n", r->nmse, o.max_nmse,
               r->max_abs_diff, r->top1_agree, r->n_tokens, ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

CommandRegistration registration("parity", "Compare the engine's logits with a reference logits file",
                                 [](CLI::App& app) {
                                     auto o = std::make_shared<ParityOptions>();
                                     app.add_option("-m,--model", o->model, "GGUF model")->required();
                                     app.add_option("--ref", o->ref, "Reference file (tokens + logits)")->required();
                                     app.add_option("--chunk", o->chunk, "Tokens per step (0: all at once)");
                                     app.add_option("-t,--threads", o->threads, "CPU threads (0: all)");
                                     app.add_option("--max-nmse", o->max_nmse, "Pass threshold")->capture_default_str();
                                     return [o] { return run_parity_command(*o); };
                                 });

}  // namespace
}  // namespace strata::cli
