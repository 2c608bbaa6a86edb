#pragma once
// The prompts `strata profile` runs, read from a file and tokenized for the model.
//
// Two formats, chosen by the file's extension:
//   *.jsonl / *.ndjson  one JSON object per line, either {"prompt": "text"} (tokenized as is,
//                       BOS as the tokenizer wants it) or {"messages": [{"role": ..., "content":
//                       ...}, ...]} (rendered with the model's chat template, with the generation
//                       prompt, as `strata run --chat` would send it);
//   anything else       plain text, one prompt per line.
// Blank lines are skipped in both. Errors name the line.
//
//   STRATA_ASSIGN_OR_RETURN(auto prompts, read_profile_prompts("prompts.jsonl", *lm));

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/engine.h"

namespace strata::cli {

struct ProfilePrompt {
    size_t line = 0;  // 1-based line of the file
    std::vector<int32_t> tokens;
};

Result<std::vector<ProfilePrompt>> read_profile_prompts(const std::string& path, const Engine& lm);

}  // namespace strata::cli
