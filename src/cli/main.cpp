// The `strata` executable: one binary, one subcommand per concern (see cli/command.h).
#include <algorithm>
#include <cstdio>

#include "cli/command.h"
#include "cli/process_io.h"

namespace strata::cli {

std::vector<CommandEntry>& command_registry() {
    static std::vector<CommandEntry> registry;
    return registry;
}

int report_failure(const std::string& command, const std::string& message) {
    std::fprintf(stderr, "strata %s: %s\n", command.c_str(), message.c_str());
    return 1;
}

namespace {
std::vector<std::string>& arguments() {
    static std::vector<std::string> args;
    return args;
}
}  // namespace

void set_process_arguments(std::vector<std::string> args) { arguments() = std::move(args); }
const std::vector<std::string>& process_arguments() { return arguments(); }

}  // namespace strata::cli

int main(int argc, char** argv) {
    using namespace strata::cli;
    prepare_standard_streams();
    set_process_arguments(utf8_arguments(argc, argv));
    std::vector<char*> utf8_argv;
    for (const std::string& a : process_arguments()) utf8_argv.push_back(const_cast<char*>(a.c_str()));
    CLI::App app{"Strata: Mixture-of-Experts inference beyond VRAM"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "strata 0.1.0");
    // CLI11 on Windows would read "/x" as option x: flags are --x everywhere, "/..." is a path.
    app.allow_windows_style_options(false);

    auto& registry = command_registry();
    std::sort(registry.begin(), registry.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
    for (auto& entry : registry) {
        CLI::App* sub = app.add_subcommand(entry.name, entry.description);
        commands.emplace_back(sub, entry.setup(*sub));
    }
    try {
        app.parse(static_cast<int>(utf8_argv.size()), utf8_argv.data());
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    for (auto& [sub, run] : commands) {
        if (sub->parsed()) return run();
    }
    return 1;
}
