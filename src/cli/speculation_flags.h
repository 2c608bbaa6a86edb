#pragma once
// The speculative decoding flags shared by `run`, `chat` and `bench` (runtime/speculative.h):
// --draft none|lookup|auto, --draft-max K and the lookup's n-gram sizes.

#include <CLI/CLI.hpp>

#include <string>

#include "runtime/speculative.h"

namespace strata::cli {

struct SpeculationFlags {
    std::string mode = "auto";
    SpeculationOptions values;

    void add_to(CLI::App& app) {
        app.add_option("--draft", mode,
                       "Speculative decoding: auto (prompt lookup where it pays: k chosen online, 0 where it does not), "
                       "lookup (always up to --draft-max drafts), none")
            ->capture_default_str();
        app.add_option("--draft-max", values.k_max, "Most tokens drafted per step")->capture_default_str();
        app.add_option("--draft-ngram-min", values.lookup.ngram_min, "Shortest n-gram prompt lookup matches")->capture_default_str();
        app.add_option("--draft-ngram-max", values.lookup.ngram_max, "Longest n-gram prompt lookup matches")->capture_default_str();
    }
    Result<SpeculationOptions> options() const {
        STRATA_ASSIGN_OR_RETURN(DraftMode m, parse_draft_mode(mode));
        SpeculationOptions o = values;
        o.mode = m;
        STRATA_TRY(o.validate());
        return o;
    }
};

// One line for stderr after a generation: how much speculation drafted, kept and yielded.
inline std::string describe_speculation(const SpeculationStats& s) {
    if (s.passes == 0) return fmt::format("speculation: no drafts verified ({} plain steps)", s.plain_steps);
    return fmt::format("speculation: {} verification passes, {} drafted, {} accepted ({:.0f}%), {:.2f} tokens per pass; {} plain steps",
                       s.passes, s.drafted, s.accepted, 100.0 * s.acceptance(), s.tokens_per_pass(), s.plain_steps);
}

}  // namespace strata::cli
