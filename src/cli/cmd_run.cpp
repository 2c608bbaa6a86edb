// `strata run [-m MODEL.gguf] -p PROMPT [-n N] [sampling flags] [--chat]`: generate text, streamed
// to stdout; load time and prompt/generation speed go to stderr at the end.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "cli/builtin_model.h"
#include "cli/command.h"
#include "cli/engine_flags.h"
#include "cli/sampling_flags.h"
#include "cli/speculation_flags.h"
#include "core/file.h"
#include "runtime/generate.h"
#include "runtime/engine.h"

namespace strata::cli {
namespace {

struct RunOptions {
    std::string model, prompt, prompt_file, system, chat_template_file;
    int64_t n_predict = 128;
    int64_t n_ctx = 4096;
    int64_t n_batch = 512;
    int threads = 0;
    bool chat = false;
    bool ignore_eos = false;
    bool verbose_prompt = false;
    SamplingFlags sampling;
    SpeculationFlags speculation;
    DeviceFlags device;
    TierFlags tiers;
};

int run_generate(RunOptions o) {
    auto model_path = model_or_builtin(o.model, "run");
    if (!model_path) return report_failure("run", model_path.status().message());
    o.model = *model_path;
    if (!o.prompt_file.empty()) {
        auto text = read_file_to_string(o.prompt_file);
        if (!text) return report_failure("run", text.status().message());
        o.prompt = *text;
    }
    SamplingParams sp = o.sampling.params();
    if (Status s = sp.validate(); !s) return report_failure("run", s.message());
    auto spec_options = o.speculation.options();
    if (!spec_options) return report_failure("run", spec_options.status().message());
    std::string template_text;
    if (!o.chat_template_file.empty()) {
        auto t = read_file_to_string(o.chat_template_file);
        if (!t) return report_failure("run", t.status().message());
        template_text = *t;
    }
    auto request = engine_request(o.model, o.device, o.tiers, o.n_ctx, o.n_batch);
    if (!request) return report_failure("run", request.status().message());
    request->chat_template = template_text;
    auto opened = Engine::open(std::move(*request));
    if (!opened) return report_failure("run", opened.status().message());
    Engine* engine = opened->get();
    const Tokenizer& tok = *engine->tokenizer;

    std::vector<int32_t> ids;
    if (o.chat) {
        nlohmann::ordered_json messages = nlohmann::ordered_json::array();
        if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
        messages.push_back({{"role", "user"}, {"content", o.prompt}});
        auto rendered = engine->render_chat(messages, true);
        if (!rendered) return report_failure("run", rendered.status().message());
        ids = engine->tokenize_chat(*rendered);
    } else {
        ids = tok.encode(o.prompt, tok.wants_bos(), /*parse_special=*/false);
    }
    if (ids.empty()) return report_failure("run", "the prompt is empty after tokenization (give -p TEXT)");
    if (o.verbose_prompt) {
        fmt::print(stderr, "prompt: {} tokens:", ids.size());
        for (int32_t id : ids) fmt::print(stderr, " {}", id);
        fmt::print(stderr, "\n");
    }

    ThreadPool pool(ThreadPool::Options{.threads = cpu_pool_threads(o.threads, engine->placement)});
    Session session(*engine->model, SessionOptions{.n_ctx = o.n_ctx, .n_batch = o.n_batch, .logits_on_device = true}, pool);
    const auto t0 = std::chrono::steady_clock::now();
    if (Status s = session.append(ids); !s) return report_failure("run", s.message());
    const double prompt_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    Sampler sampler(sp);
    Speculation speculation(*spec_options);
    GenerateRequest req{.max_tokens = o.n_predict, .stop = o.sampling.stop, .ignore_eos = o.ignore_eos, .speculation = &speculation};
    if (!o.chat) std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
    auto result = generate(session, tok, sampler, req, [](std::string_view piece) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
    });
    std::fputc('\n', stdout);
    if (!result) return report_failure("run", result.status().message());
    fmt::print(stderr, "\non {}", engine->model->device_name());
    fmt::print(stderr, "\nload {:.2f} s | prompt {} tokens, {:.1f} tok/s | generated {} tokens, {:.1f} tok/s | finish: {}\n",
               engine->load_seconds, ids.size(), static_cast<double>(ids.size()) / prompt_seconds, result->n_generated,
               result->seconds > 0 ? static_cast<double>(result->n_generated) / result->seconds : 0.0,
               finish_reason_name(result->finish));
    if (speculation.enabled()) fmt::print(stderr, "{}\n", describe_speculation(speculation.stats()));
    return 0;
}

CommandRegistration registration("run", "Generate text from a prompt", [](CLI::App& app) {
    auto o = std::make_shared<RunOptions>();
    app.add_option("-m,--model", o->model, "GGUF model file (default: the built-in model, models/strata-kjv-moe.gguf)");
    app.add_option("-p,--prompt", o->prompt, "Prompt text");
    app.add_option("-f,--file", o->prompt_file, "Read the prompt from a file");
    app.add_option("-n,--n-predict", o->n_predict, "Tokens to generate")->capture_default_str();
    app.add_option("-c,--ctx-size", o->n_ctx, "Context size in tokens")->capture_default_str()->check(CLI::Range(1, 1 << 24));
    app.add_option("-b,--batch-size", o->n_batch, "Prompt tokens per forward pass")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    add_threads_option(app, o->threads);
    app.add_flag("--chat", o->chat, "Wrap the prompt in the model's chat template as a user message");
    app.add_option("--system", o->system, "System message (with --chat)");
    app.add_option("--chat-template", o->chat_template_file, "Jinja file to use instead of the model's template");
    app.add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-generation tokens");
    app.add_flag("--verbose-prompt", o->verbose_prompt, "Print the prompt's token ids");
    o->sampling.add_to(app);
    o->speculation.add_to(app);
    o->tiers.add_to(app);
    o->device.add_to(app);
    return [o] { return run_generate(*o); };
});

}  // namespace
}  // namespace strata::cli
