// `strata perplexity -m MODEL.gguf -f TEXT [--ctx N]`: how well the model predicts a text, as
// the exponential of the mean negative log-likelihood per token (windowing: runtime/perplexity.h).
#include <fmt/format.h>

#include <chrono>

#include "cli/command.h"
#include "cli/engine_flags.h"
#include "core/file.h"
#include "runtime/engine.h"
#include "runtime/perplexity.h"

namespace strata::cli {
namespace {

struct PerplexityCliOptions {
    std::string model, file;
    int64_t ctx = 512;
    int64_t n_batch = 512;
    int threads = 0;
    bool json = false;
    DeviceFlags device;
    TierFlags tiers;
};

int run_perplexity(const PerplexityCliOptions& o) {
    auto text = read_file_to_string(o.file);
    if (!text) return report_failure("perplexity", text.status().message());
    auto request = engine_request(o.model, o.device, o.tiers, o.ctx, o.n_batch);
    if (!request) return report_failure("perplexity", request.status().message());
    auto opened = Engine::open(std::move(*request));
    if (!opened) return report_failure("perplexity", opened.status().message());
    Engine* engine = opened->get();
    const Tokenizer& tok = *engine->tokenizer;
    const std::vector<int32_t> ids = tok.encode(*text, /*add_bos=*/false, /*parse_special=*/false);
    ThreadPool pool(ThreadPool::Options{.threads = cpu_pool_threads(o.threads, engine->placement)});
    PerplexityOptions popt;
    popt.ctx = o.ctx;
    popt.n_batch = o.n_batch;
    popt.progress = [](int64_t done, int64_t all) { fmt::print(stderr, "\rperplexity: window {}/{}", done, all); };
    const auto t0 = std::chrono::steady_clock::now();
    auto r = compute_perplexity(*engine->model, ids, tok.bos_id(), popt, pool);
    fmt::print(stderr, "\n");
    if (!r) return report_failure("perplexity", r.status().message());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.json) {
        fmt::print("{{\"perplexity\": {:.6f}, \"mean_nll\": {:.8f}, \"tokens\": {}, \"windows\": {}, \"ctx\": {}}}\n",
                   r->perplexity(), r->mean_nll(), r->n_scored, r->n_windows, o.ctx);
    } else {
        fmt::print("perplexity {:.4f} (mean NLL {:.6f}) over {} tokens in {} windows of ctx {}\n", r->perplexity(),
                   r->mean_nll(), r->n_scored, r->n_windows, o.ctx);
    }
    fmt::print(stderr, "{:.1f} s, {:.0f} tokens/s\n", seconds, double(r->n_scored) / seconds);
    return 0;
}

CommandRegistration registration("perplexity", "Perplexity of a model on a text file", [](CLI::App& app) {
    auto o = std::make_shared<PerplexityCliOptions>();
    app.add_option("-m,--model", o->model, "GGUF model file")->required();
    app.add_option("-f,--file", o->file, "Text file to score")->required();
    app.add_option("-c,--ctx", o->ctx, "Positions per window, BOS included")->capture_default_str()->check(CLI::Range(2, 1 << 20));
    app.add_option("-b,--batch-size", o->n_batch, "Tokens per forward pass")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    add_threads_option(app, o->threads);
    app.add_flag("--json", o->json, "Print the result as one JSON object");
    o->device.add_to(app);
    o->tiers.add_to(app);
    return [o] { return run_perplexity(*o); };
});

}  // namespace
}  // namespace strata::cli
