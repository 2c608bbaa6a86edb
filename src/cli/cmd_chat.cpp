// `strata chat -m MODEL.gguf`: an interactive conversation in the terminal. Each turn is rendered
// with the model's chat template; the KV cache keeps the conversation so far, and only the tokens
// after the longest common prefix with what the cache holds are computed again.
// Lines starting with '/' are commands: /reset, /exit (end of input also exits).
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "cli/builtin_model.h"
#include "cli/command.h"
#include "cli/sampling_flags.h"
#include "cli/speculation_flags.h"
#include "cli/engine_flags.h"
#include "core/file.h"
#include "runtime/generate.h"
#include "runtime/engine.h"

namespace strata::cli {
namespace {

struct ChatOptions {
    std::string model, system, chat_template_file;
    int64_t n_predict = 512;
    int64_t n_ctx = 4096;
    int threads = 0;
    SamplingFlags sampling;
    SpeculationFlags speculation;
    DeviceFlags device;
    TierFlags tiers;
};

int64_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    size_t n = std::min(a.size(), b.size()), i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return static_cast<int64_t>(i);
}

int run_chat(ChatOptions o) {
    auto model_path = model_or_builtin(o.model, "chat");
    if (!model_path) return report_failure("chat", model_path.status().message());
    o.model = *model_path;
    std::string template_text;
    if (!o.chat_template_file.empty()) {
        auto t = read_file_to_string(o.chat_template_file);
        if (!t) return report_failure("chat", t.status().message());
        template_text = *t;
    }
    auto request = engine_request(o.model, o.device, o.tiers, o.n_ctx, 512);
    if (!request) return report_failure("chat", request.status().message());
    request->chat_template = template_text;
    auto opened = Engine::open(std::move(*request));
    if (!opened) return report_failure("chat", opened.status().message());
    Engine* engine = opened->get();
    if (!engine->chat_template) {
        return report_failure("chat", o.model + " has no chat template; give one with --chat-template FILE.jinja");
    }
    SamplingParams sp = o.sampling.params();
    if (Status s = sp.validate(); !s) return report_failure("chat", s.message());
    auto spec_options = o.speculation.options();
    if (!spec_options) return report_failure("chat", spec_options.status().message());
    // One for the conversation: the draft length it learns carries over from turn to turn.
    Speculation speculation(*spec_options);
    ThreadPool pool(ThreadPool::Options{.threads = cpu_pool_threads(o.threads, engine->placement)});
    Session session(*engine->model, SessionOptions{.n_ctx = o.n_ctx, .logits_on_device = true}, pool);
    const Tokenizer& tok = *engine->tokenizer;

    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    auto reset = [&] {
        messages = nlohmann::ordered_json::array();
        if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
    };
    reset();
    fmt::print(stderr, "strata chat: {} loaded in {:.2f} s. Type a message; /reset starts over, /exit quits.\n",
               o.model, engine->load_seconds);
    std::string line;
    for (;;) {
        fmt::print(stderr, "> ");
        std::fflush(stderr);
        if (!std::getline(std::cin, line)) break;
        if (line == "/exit" || line == "/quit") break;
        if (line == "/reset") {
            reset();
            session.truncate(0);
            fmt::print(stderr, "(conversation cleared)\n");
            continue;
        }
        if (line.empty()) continue;
        messages.push_back({{"role", "user"}, {"content", line}});
        auto rendered = engine->render_chat(messages, true);
        if (!rendered) return report_failure("chat", rendered.status().message());
        std::vector<int32_t> ids = engine->tokenize_chat(*rendered);
        const int64_t keep = common_prefix(session.tokens(), ids);
        // At least the last token must be run again so that the session's logits belong to it.
        session.truncate(std::min<int64_t>(keep, static_cast<int64_t>(ids.size()) - 1));
        std::span<const int32_t> rest(ids.data() + session.n_past(), ids.size() - static_cast<size_t>(session.n_past()));
        if (Status s = session.append(rest); !s) {
            fmt::print(stderr, "strata chat: {}\n", s.message());
            messages.erase(messages.end() - 1);
            continue;
        }
        Sampler sampler(sp);
        GenerateRequest req{.max_tokens = o.n_predict, .stop = o.sampling.stop, .speculation = &speculation};
        const SpeculationStats before = speculation.stats();
        auto result = generate(session, tok, sampler, req, [](std::string_view piece) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
            return true;
        });
        std::fputc('\n', stdout);
        std::fflush(stdout);
        if (!result) return report_failure("chat", result.status().message());
        messages.push_back({{"role", "assistant"}, {"content", result->text}});
        const SpeculationStats& after = speculation.stats();
        const int64_t drafted = after.drafted - before.drafted, accepted = after.accepted - before.accepted;
        fmt::print(stderr, "({} tokens, {:.1f} tok/s{}{})\n", result->n_generated,
                   result->seconds > 0 ? static_cast<double>(result->n_generated) / result->seconds : 0.0,
                   drafted > 0 ? fmt::format(", {} of {} drafts accepted", accepted, drafted) : "",
                   result->finish == FinishReason::ContextFull ? ", context full: /reset to continue" : "");
    }
    return 0;
}

CommandRegistration registration("chat", "Chat with a model in the terminal", [](CLI::App& app) {
    auto o = std::make_shared<ChatOptions>();
    app.add_option("-m,--model", o->model, "GGUF model file (default: the built-in model, models/strata-kjv-moe.gguf)");
    app.add_option("--system", o->system, "System message");
    app.add_option("--chat-template", o->chat_template_file, "Jinja file to use instead of the model's template");
    app.add_option("-n,--n-predict", o->n_predict, "Most tokens per reply")->capture_default_str();
    app.add_option("-c,--ctx-size", o->n_ctx, "Context size in tokens")->capture_default_str()->check(CLI::Range(16, 1 << 24));
    add_threads_option(app, o->threads);
    o->sampling.add_to(app);
    o->speculation.add_to(app);
    o->device.add_to(app);
    o->tiers.add_to(app);
    return [o] { return run_chat(*o); };
});

}  // namespace
}  // namespace strata::cli
