// `strata template --template FILE.jinja --vars VARS.json [--add-generation-prompt] [--now ISO]`:
// renders a chat template exactly as transformers' apply_chat_template would, and writes the
// bytes to stdout with nothing added. Useful to check a model's template against a reference.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>

#include "cli/command.h"
#include "core/file.h"
#include "tokenizer/chat_template/template.h"

namespace strata::cli {
namespace {

struct TemplateOptions {
    std::string template_path;
    std::string vars_path;
    bool add_generation_prompt = false;
    std::string now;
};

int run_template(const TemplateOptions& opts) {
    auto source = read_file_to_string(opts.template_path);
    if (!source) return report_failure("template", source.status().message());
    auto vars_text = read_file_to_string(opts.vars_path);
    if (!vars_text) return report_failure("template", vars_text.status().message());

    nlohmann::ordered_json vars;
    try {
        vars = nlohmann::ordered_json::parse(*vars_text);
    } catch (const nlohmann::json::parse_error& e) {
        return report_failure("template", fmt::format("reading {}: expected JSON, got a parse error: {}",
                                                      opts.vars_path, e.what()));
    }
    if (!vars.is_object()) {
        return report_failure("template", fmt::format("reading {}: expected one JSON object of variables, got {} "
                                                      "(wrap them: {{\"messages\": [...]}})",
                                                      opts.vars_path, vars.type_name()));
    }
    // The flag sets add_generation_prompt unless the variables already give it.
    if (!vars.contains("add_generation_prompt")) vars["add_generation_prompt"] = opts.add_generation_prompt;

    auto tmpl = chat_template::ChatTemplate::parse(std::move(*source));
    if (!tmpl) return report_failure("template", fmt::format("{}: {}", opts.template_path, tmpl.status().message()));
    chat_template::RenderOptions render_options;
    if (!opts.now.empty()) render_options.now = opts.now;
    auto text = tmpl->render(vars, render_options);
    if (!text) return report_failure("template", fmt::format("{}: {}", opts.template_path, text.status().message()));
    std::fwrite(text->data(), 1, text->size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : report_failure("template", "writing to stdout failed");
}

static CommandRegistration reg("template", "Render a chat template (Jinja) with JSON variables", [](CLI::App& app) {
    auto opts = std::make_shared<TemplateOptions>();
    app.add_option("--template", opts->template_path, "Chat template file (Jinja)")->required();
    app.add_option("--vars", opts->vars_path, "JSON object whose members become template variables")->required();
    app.add_flag("--add-generation-prompt", opts->add_generation_prompt,
                 "Set add_generation_prompt=true (unless the variables give it)");
    app.add_option("--now", opts->now, "Time for strftime_now(), e.g. 2026-01-15T00:00:00 (default: local time)");
    return [opts] { return run_template(*opts); };
});

}  // namespace
}  // namespace strata::cli
