// `strata profile -m MODEL.gguf --prompts FILE [-o PROFILE] [--ctx N] [-t THREADS]
//                 [--max-tokens-per-prompt N] [-n N]`: runs every prompt of FILE on the CPU and
// records, per MoE layer, how many tokens were routed to each expert. The profile (JSON, format in
// experts/expert_profile.h) is what `--expert-profile` fills the GPU expert cache's static hot set
// from. The counting changes nothing in the computation (experts/expert_counter.h); prompts
// formats: cli/profile_prompts.h.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/command.h"
#include "cli/profile_prompts.h"
#include "cli/profile_run.h"
#include "core/file.h"
#include "experts/expert_counter.h"
#include "experts/expert_profile.h"
#include "experts/expert_profile_summary.h"

#if defined(_WIN32)
#include <io.h>
#define STRATA_STDERR_IS_TTY() (_isatty(_fileno(stderr)) != 0)
#else
#include <unistd.h>
#define STRATA_STDERR_IS_TTY() (isatty(STDERR_FILENO) != 0)
#endif

namespace strata::cli {
namespace {

struct ProfileCliOptions {
    std::string model, prompts, output, chat_template_file;
    ProfileRunOptions run;
    int threads = 0;
};

// "model.gguf" → "model.profile.json" in the current folder: the default output.
std::string default_output(const std::string& model_path) {
    std::string name = model_path.substr(model_path.find_last_of("/\\") + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) name.resize(name.size() - 5);
    return name + ".profile.json";
}

// A one-line progress report on stderr, redrawn at most five times a second on a terminal (a
// profile of thousands of prompts runs for hours); elsewhere only the final line is printed.
class ProfileProgressLine {
public:
    explicit ProfileProgressLine(size_t n_prompts) : n_prompts_(n_prompts), tty_(STRATA_STDERR_IS_TTY()) {}
    void update(const ProfileRunTotals& t) {
        const auto now = std::chrono::steady_clock::now();
        if (!tty_ || now - last_ < std::chrono::milliseconds(200)) return;
        last_ = now;
        draw(t, "\r");
    }
    void finish(const ProfileRunTotals& t) {
        draw(t, tty_ ? "\r" : "");
        std::fputc('\n', stderr);
    }
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    void draw(const ProfileRunTotals& t, const char* prefix) {
        const double s = seconds();
        fmt::print(stderr, "{}profile: {}/{} prompts, {} tokens, {:.0f} tok/s, {:.0f} s   ", prefix, t.prompts,
                   n_prompts_, t.tokens, s > 0 ? static_cast<double>(t.tokens) / s : 0.0, s);
        std::fflush(stderr);
    }
    size_t n_prompts_;
    bool tty_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

void print_summary(const ExpertProfile& p, const std::string& path) {
    const ExpertProfileSummary s = summarize_expert_profile(p);
    fmt::print("{} prompts, {} tokens ({} generated), {} MoE layers of {} experts, {} used per token\n", p.prompts,
               p.tokens, p.generated_tokens, p.layers.size(), p.model.n_expert, p.model.n_expert_used);
    fmt::print("top {:.0f}% of experts ({} per layer) take this share of the layer's routed tokens "
               "(uniform routing: {:.0f}%):\n",
               s.top_fraction * 100, s.top_per_layer,
               100.0 * s.top_per_layer / std::max<uint32_t>(p.model.n_expert, 1));
    fmt::print("  layer  routed      top share  unused experts\n");
    for (const LayerConcentration& c : s.layers)
        fmt::print("  {:>5}  {:>10}  {:>8.1f}%  {:>5}\n", c.layer, c.routed, 100 * c.top_share, c.unused);
    fmt::print("overall: the top {:.0f}% of all {} experts take {:.1f}% of routed tokens; {} never routed\n",
               s.top_fraction * 100, s.experts, 100 * s.top_share, s.unused);
    fmt::print("a hot set of {} experts covers 50% of routed tokens, {} covers 90%\n", s.cover_half, s.cover_90);
    fmt::print("profile written to {}\n", path);
}

int run_profile(ProfileCliOptions o) {
    if (o.output.empty()) o.output = default_output(o.model);
    std::string chat_template;  // empty: the model's own
    if (!o.chat_template_file.empty()) {
        auto t = read_file_to_string(o.chat_template_file);
        if (!t) return report_failure("profile", t.status().message());
        chat_template = std::move(*t);
    }
    auto lm = Engine::open({.model_path = o.model, .chat_template = chat_template});
    if (!lm) return report_failure("profile", lm.status().message());
    auto who = expert_profile_model((*lm)->file);
    if (!who) return report_failure("profile", who.status().message());
    auto layers = expert_tensors_from_gguf((*lm)->file);
    if (!layers) return report_failure("profile", layers.status().message());
    auto prompts = read_profile_prompts(o.prompts, **lm);
    if (!prompts) return report_failure("profile", prompts.status().message());

    ExpertCounter counter(*layers, who->n_expert);
    ThreadPool pool(ThreadPool::Options{.threads = o.threads});
    CpuContext ctx(pool, (*lm)->model->cpu_tuning());
    ProfileProgressLine line(prompts->size());
    // A pass that reached no MoE block through the hook means the architecture's MoE blocks do not
    // report routing (every MoE architecture here does; a new one might not): stop after it rather
    // than run every prompt.
    auto totals = run_profile_prompts(**lm, *prompts, counter, o.run, ctx, [&](const ProfileRunTotals& t) {
        line.update(t);
        return counter.steps() > 0;
    });
    if (!totals) return report_failure("profile", totals.status().message());
    line.finish(*totals);
    if (counter.steps() == 0)
        return report_failure("profile", fmt::format("the {} architecture's MoE blocks do not report their routing "
                                                     "(MoeExpertSource) yet, so it cannot be profiled",
                                                     who->architecture));
    if (totals->truncated_prompts > 0)
        fmt::print(stderr, "profile: {} prompts were cut to fit --max-tokens-per-prompt / --ctx\n",
                   totals->truncated_prompts);

    ExpertProfile profile;
    profile.model = *who;
    profile.prompts = totals->prompts;
    profile.tokens = totals->tokens;
    profile.generated_tokens = totals->generated_tokens;
    profile.layers = counter.layers();
    if (Status s = save_expert_profile(o.output, profile); !s) return report_failure("profile", s.message());
    print_summary(profile, o.output);
    return 0;
}

CommandRegistration registration("profile", "Record which experts a set of prompts routes to (for --expert-profile)",
                                 [](CLI::App& app) {
    auto o = std::make_shared<ProfileCliOptions>();
    app.add_option("-m,--model", o->model, "GGUF model file (a MoE model)")->required();
    app.add_option("--prompts", o->prompts,
                   "Prompts: one per line, or JSONL (*.jsonl) of {\"prompt\": ...} or {\"messages\": [...]}")
        ->required();
    app.add_option("-o,--output", o->output, "Profile file to write (default: MODEL.profile.json here)");
    app.add_option("-c,--ctx", o->run.n_ctx, "Positions per prompt, generated tokens included")
        ->capture_default_str()->check(CLI::Range(2, 1 << 24));
    app.add_option("-b,--batch-size", o->run.n_batch, "Prompt tokens per forward pass")
        ->capture_default_str()->check(CLI::Range(1, 1 << 16));
    app.add_option("--max-tokens-per-prompt", o->run.max_prompt_tokens,
                   "Cut longer prompts to their first N tokens (0: as many as --ctx allows)")
        ->capture_default_str()->check(CLI::Range(0, 1 << 24));
    app.add_option("-n,--n-predict", o->run.n_generate, "Greedy tokens to generate (and count) after each prompt")
        ->capture_default_str()->check(CLI::Range(0, 1 << 20));
    app.add_option("-t,--threads", o->threads, "CPU threads (0: all)");
    app.add_option("--chat-template", o->chat_template_file,
                   "Jinja file to render {\"messages\"} prompts with instead of the model's template");
    return [o] { return run_profile(*o); };
});

}  // namespace
}  // namespace strata::cli
