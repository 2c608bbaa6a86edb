#pragma once
// Routing profiles: how many tokens each MoE layer routed to each of its experts over a set of
// prompts (`strata profile`). The GPU expert cache fills its static hot set from one, in
// hottest_first() order, so the experts a workload uses most are resident before the first step.
//
//   STRATA_ASSIGN_OR_RETURN(ExpertProfileModel who, expert_profile_model(gguf));
//   STRATA_ASSIGN_OR_RETURN(ExpertProfile p, load_expert_profile("qwen3.profile.json", who));
//   for (ExpertKey k : hottest_first(p)) ...     // fill slots until they run out
//
// File format (JSON, UTF-8), version 1. Layers are listed by increasing model layer index; only
// MoE layers appear (DeepSeek's leading dense layers do not); `counts[e]` is the number of
// (token, expert) routings of expert e in that layer, so each layer's counts add up to
// tokens × n_expert_used when every token went through every layer.
//
//   {
//     "format": "strata-expert-profile",
//     "version": 1,
//     "model": {"name": "Qwen3 30B A3B", "architecture": "qwen3moe", "file_bytes": 17362944,
//               "n_layer": 48, "n_expert": 128, "n_expert_used": 8},
//     "prompts": 300, "tokens": 81234, "generated_tokens": 0,
//     "layers": [
//       {"layer": 0, "counts": [812, 0, 4411, ...]},
//       ...
//     ]
//   }
//
// A profile matches a model when name, architecture, layer count, expert count and experts used
// agree. The file size is recorded for reference only: a profile carries over to another
// quantization of the same model, whose routing is close enough for a cache's hot set.

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "experts/expert_store.h"
#include "gguf/reader.h"

namespace strata {

inline constexpr const char* kExpertProfileFormat = "strata-expert-profile";
inline constexpr int kExpertProfileVersion = 1;

// What a profile says about the model it was recorded on, and what it is checked against.
struct ExpertProfileModel {
    std::string name;          // general.name, else the file name (as `strata plan` names it)
    std::string architecture;  // general.architecture
    uint64_t file_bytes = 0;   // all split parts together
    uint32_t n_layer = 0;
    uint32_t n_expert = 0;
    uint32_t n_expert_used = 0;
};

struct ExpertProfileLayer {
    uint32_t layer = 0;            // model layer index (blk.N)
    std::vector<uint64_t> counts;  // by expert index: tokens routed to it
};

struct ExpertProfile {
    int version = kExpertProfileVersion;
    ExpertProfileModel model;
    uint64_t prompts = 0;           // prompts run
    uint64_t tokens = 0;            // tokens run through the model (prompt + generated)
    uint64_t generated_tokens = 0;  // of which generated
    std::vector<ExpertProfileLayer> layers;  // MoE layers, by increasing layer index
};

// The identity of an opened model file (its config read from the metadata).
Result<ExpertProfileModel> expert_profile_model(const GgufFile& file);

// Reads and checks a profile file: well-formed JSON of this format and version, every layer with
// n_expert counts, layer indices increasing and below n_layer. Errors name the file and the
// field ("expected ..., got ...").
Result<ExpertProfile> load_expert_profile(const std::string& path);
// The same, then checked against the model it is meant for (expert_profile_matches).
Result<ExpertProfile> load_expert_profile(const std::string& path, const ExpertProfileModel& model);
// Whether a profile was recorded on `model`: the error says which property differs and how.
Status expert_profile_matches(const ExpertProfile& profile, const ExpertProfileModel& model);

// The profile as its file format, and written to `path` (replacing it).
std::string expert_profile_to_json(const ExpertProfile& profile);
Status save_expert_profile(const std::string& path, const ExpertProfile& profile);

// Every (layer, expert) pair of the profile, most routed first; equal counts by layer, then expert,
// so the order is a pure function of the counts. Experts never routed come last, still ordered,
// so a cache with room for all of them can take the whole list.
std::vector<ExpertKey> hottest_first(const ExpertProfile& profile);

}  // namespace strata
