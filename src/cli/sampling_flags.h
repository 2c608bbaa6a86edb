#pragma once
// The sampling flags shared by `run`, `chat` and `bench` (names as llama.cpp's tools use them).

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "runtime/sampler.h"

namespace strata::cli {

struct SamplingFlags {
    SamplingParams values;
    std::vector<std::string> stop;

    void add_to(CLI::App& app) {
        app.add_option("--temp", values.temperature, "Temperature (0: greedy)")->capture_default_str();
        app.add_option("--top-k", values.top_k, "Top-k (0: off)")->capture_default_str();
        app.add_option("--top-p", values.top_p, "Top-p (1: off)")->capture_default_str();
        app.add_option("--min-p", values.min_p, "Min-p (0: off)")->capture_default_str();
        app.add_option("--repeat-penalty", values.repetition_penalty, "Repetition penalty (1: off)")->capture_default_str();
        app.add_option("--presence-penalty", values.presence_penalty, "Presence penalty")->capture_default_str();
        app.add_option("--frequency-penalty", values.frequency_penalty, "Frequency penalty")->capture_default_str();
        app.add_option("--repeat-last-n", values.penalty_last_n, "Tokens the penalties look back over (-1: all)")->capture_default_str();
        app.add_option("-s,--seed", values.seed, "Random seed")->capture_default_str();
        app.add_option("--stop", stop, "Stop string (repeatable)");
    }
    SamplingParams params() const { return values; }
};

}  // namespace strata::cli
