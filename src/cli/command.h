#pragma once
// Subcommands of the `strata` executable register themselves here, one file each
// (cli/cmd_<name>.cpp), so adding a command touches no shared file.
//
//   static CommandRegistration reg("inspect", "Describe a GGUF file", [](CLI::App& app) {
//       auto opts = std::make_shared<Options>();
//       app.add_option("file", opts->path)->required();
//       return [opts] { return run_inspect(*opts); };   // returns the process exit code
//   });

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace strata::cli {

// Called once to declare the command's options; returns the function that runs it.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandEntry {
    std::string name;
    std::string description;
    CommandSetup setup;
};

std::vector<CommandEntry>& command_registry();

struct CommandRegistration {
    CommandRegistration(std::string name, std::string description, CommandSetup setup) {
        command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
    }
};

// Prints "strata <command>: <message>" to stderr and returns the exit code for failures (1).
int report_failure(const std::string& command, const std::string& message);

// The command line this process was started with (main sets it): what a command needs to run the
// process again (cli/self_rerun.h).
void set_process_arguments(std::vector<std::string> args);
const std::vector<std::string>& process_arguments();

}  // namespace strata::cli
