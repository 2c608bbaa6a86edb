#pragma once
// The sampling flags shared by `run`, `chat` and `serve` (names as llama.cpp's tools use them):
// one SamplingParams, whose defaults are the flags' defaults. `serve` takes them as the defaults of
// requests that leave a setting out.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "runtime/sampler.h"

namespace strata::cli {

struct SamplingFlags {
    SamplingParams values;
    std::vector<std::string> stop;

    enum class Use { Generation, RequestDefaults };

    void add_to(CLI::App& app, Use use = Use::Generation) {
        const bool defaults = use == Use::RequestDefaults;
        const auto help = [&](const char* what) {
            return defaults ? std::string("Default ") + what + " (requests may set their own)" : std::string(what);
        };
        app.add_option("--temp", values.temperature, help("temperature (0: greedy)"))->capture_default_str();
        app.add_option("--top-k", values.top_k, help("top-k (0: off)"))->capture_default_str();
        app.add_option("--top-p", values.top_p, help("top-p (1: off)"))->capture_default_str();
        app.add_option("--min-p", values.min_p, help("min-p (0: off)"))->capture_default_str();
        app.add_option("--repeat-penalty", values.repetition_penalty, help("repetition penalty (1: off)"))->capture_default_str();
        app.add_option("--presence-penalty", values.presence_penalty, help("presence penalty"))->capture_default_str();
        app.add_option("--frequency-penalty", values.frequency_penalty, help("frequency penalty"))->capture_default_str();
        app.add_option("--repeat-last-n", values.penalty_last_n, help("tokens the penalties look back over (-1: all)"))
            ->capture_default_str();
        app.add_option("-s,--seed", values.seed, help("random seed"))->capture_default_str();
        if (!defaults) app.add_option("--stop", stop, "Stop string (repeatable)");
    }
    SamplingParams params() const { return values; }
};

}  // namespace strata::cli
