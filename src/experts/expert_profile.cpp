#include "experts/expert_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/file.h"
#include "plan/model_bytes.h"

namespace strata {

namespace {

using Json = nlohmann::json;

// Reads the fields of one JSON object, recording the first problem with its path in the file
// ("model.n_layer: expected an unsigned integer, got \"6\"") so each check stays one line.
class FieldReader {
public:
    FieldReader(const Json& object, std::string where) : object_(object), where_(std::move(where)) {}

    const Json* field(const char* key) {
        if (!status_) return nullptr;
        auto it = object_.find(key);
        if (it == object_.end()) {
            fail(key, "missing");
            return nullptr;
        }
        return &*it;
    }
    uint64_t unsigned_int(const char* key) {
        const Json* v = field(key);
        if (v && !v->is_number_unsigned()) fail(key, fmt::format("expected an unsigned integer, got {}", shown(*v)));
        return status_ ? v->get<uint64_t>() : 0;
    }
    std::string string(const char* key) {
        const Json* v = field(key);
        if (v && !v->is_string()) fail(key, fmt::format("expected a string, got {}", shown(*v)));
        return status_ ? v->get<std::string>() : std::string();
    }
    const Json* array(const char* key) {
        const Json* v = field(key);
        if (v && !v->is_array()) fail(key, fmt::format("expected an array, got {}", shown(*v)));
        return status_ ? v : nullptr;
    }
    const Json* object(const char* key) {
        const Json* v = field(key);
        if (v && !v->is_object()) fail(key, fmt::format("expected an object, got {}", shown(*v)));
        return status_ ? v : nullptr;
    }
    void fail(const std::string& key, const std::string& what) {
        if (status_) status_ = Status::error("{}{}: {}", where_, key, what);
    }
    const Status& status() const { return status_; }

    // A value as the message shows it: short, so a huge array does not flood the terminal.
    static std::string shown(const Json& v) {
        std::string s = v.dump();
        return s.size() > 40 ? s.substr(0, 37) + "..." : s;
    }

private:
    const Json& object_;
    std::string where_;
    Status status_;
};

// A JSON string literal; bytes that are not UTF-8 (a GGUF name may hold any) become U+FFFD
// instead of making the writer throw.
std::string json_string(const std::string& s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

Result<ExpertProfileModel> parse_model(const Json& j) {
    FieldReader r(j, "model.");
    ExpertProfileModel m;
    m.name = r.string("name");
    m.architecture = r.string("architecture");
    m.file_bytes = r.unsigned_int("file_bytes");
    const uint64_t n_layer = r.unsigned_int("n_layer"), n_expert = r.unsigned_int("n_expert"),
                   n_used = r.unsigned_int("n_expert_used");
    STRATA_TRY(r.status());
    // Bounds far above any real model, so a corrupt number cannot make us allocate gigabytes.
    constexpr uint64_t kMaxLayers = 1 << 16, kMaxExperts = 1 << 16;
    if (n_layer == 0 || n_layer > kMaxLayers)
        return Status::error("model.n_layer: expected 1..{}, got {}", kMaxLayers, n_layer);
    if (n_expert == 0 || n_expert > kMaxExperts)
        return Status::error("model.n_expert: expected 1..{}, got {}", kMaxExperts, n_expert);
    if (n_used == 0 || n_used > n_expert)
        return Status::error("model.n_expert_used: expected 1..n_expert ({}), got {}", n_expert, n_used);
    m.n_layer = static_cast<uint32_t>(n_layer);
    m.n_expert = static_cast<uint32_t>(n_expert);
    m.n_expert_used = static_cast<uint32_t>(n_used);
    return m;
}

Result<ExpertProfileLayer> parse_layer(const Json& j, size_t index, const ExpertProfileModel& m) {
    const std::string where = fmt::format("layers[{}]", index);
    if (!j.is_object()) return Status::error("{}: expected an object, got {}", where, FieldReader::shown(j));
    FieldReader r(j, where + ".");
    ExpertProfileLayer L;
    const uint64_t layer = r.unsigned_int("layer");
    const Json* counts = r.array("counts");
    STRATA_TRY(r.status());
    if (layer >= m.n_layer)
        return Status::error("{}.layer: expected a layer index below n_layer ({}), got {}", where, m.n_layer, layer);
    if (counts->size() != m.n_expert)
        return Status::error("{}.counts: expected {} counts (n_expert), got {}", where, m.n_expert, counts->size());
    L.layer = static_cast<uint32_t>(layer);
    L.counts.reserve(counts->size());
    for (size_t e = 0; e < counts->size(); ++e) {
        const Json& c = (*counts)[e];
        if (!c.is_number_unsigned())
            return Status::error("{}.counts[{}]: expected an unsigned integer, got {}", where, e, FieldReader::shown(c));
        L.counts.push_back(c.get<uint64_t>());
    }
    return L;
}

Result<ExpertProfile> parse_profile(const Json& j) {
    if (!j.is_object()) return Status::error("expected a JSON object, got {}", FieldReader::shown(j));
    FieldReader r(j, "");
    const std::string format = r.string("format");
    STRATA_TRY(r.status());
    if (format != kExpertProfileFormat)
        return Status::error("format: expected \"{}\", got \"{}\" (not an expert profile)", kExpertProfileFormat, format);
    const uint64_t version = r.unsigned_int("version");
    STRATA_TRY(r.status());
    if (version != static_cast<uint64_t>(kExpertProfileVersion))
        return Status::error("version: expected {}, got {} ({})", kExpertProfileVersion, version,
                             version > static_cast<uint64_t>(kExpertProfileVersion)
                                 ? "written by a newer strata: update, or record the profile again"
                                 : "record the profile again with `strata profile`");

    ExpertProfile p;
    const Json* model = r.object("model");
    p.prompts = r.unsigned_int("prompts");
    p.tokens = r.unsigned_int("tokens");
    p.generated_tokens = r.unsigned_int("generated_tokens");
    const Json* layers = r.array("layers");
    STRATA_TRY(r.status());
    STRATA_ASSIGN_OR_RETURN(p.model, parse_model(*model));
    if (p.generated_tokens > p.tokens)
        return Status::error("generated_tokens: expected at most tokens ({}), got {}", p.tokens, p.generated_tokens);
    if (layers->empty()) return Status::error("layers: expected at least one MoE layer, got none");
    for (size_t i = 0; i < layers->size(); ++i) {
        STRATA_ASSIGN_OR_RETURN(ExpertProfileLayer L, parse_layer((*layers)[i], i, p.model));
        if (!p.layers.empty() && L.layer <= p.layers.back().layer)
            return Status::error("layers[{}].layer: expected a layer after {} (increasing, each once), got {}", i,
                                 p.layers.back().layer, L.layer);
        p.layers.push_back(std::move(L));
    }
    return p;
}

}  // namespace

Result<ExpertProfileModel> expert_profile_model(const GgufFile& file) {
    // The planner's inventory names models the same way `strata plan` shows them.
    STRATA_ASSIGN_OR_RETURN(ModelInventory inv, inventory_from_gguf(file));
    if (!inv.config.is_moe()) return Status::error("{} is not a MoE model: it has no experts to profile", file.path());
    return ExpertProfileModel{inv.name,
                              std::string(inv.config.arch_name()),
                              inv.file_bytes,
                              inv.config.n_layer,
                              inv.config.n_expert,
                              inv.config.n_expert_used};
}

Result<ExpertProfile> load_expert_profile(const std::string& path) {
    STRATA_ASSIGN_OR_RETURN(std::string text, read_file_to_string(path));
    Json j;
    try {
        j = Json::parse(text);
    } catch (const Json::parse_error& e) {
        // e.what() names the byte offset and what the parser expected there.
        return Status::error("expert profile {}: not valid JSON: {}", path, e.what());
    }
    auto p = parse_profile(j);
    if (!p) return p.status().with_context(fmt::format("expert profile {}", path));
    return p;
}

Result<ExpertProfile> load_expert_profile(const std::string& path, const ExpertProfileModel& model) {
    STRATA_ASSIGN_OR_RETURN(ExpertProfile p, load_expert_profile(path));
    Status s = expert_profile_matches(p, model);
    if (!s) return s.with_context(fmt::format("expert profile {}", path));
    return p;
}

Status expert_profile_matches(const ExpertProfile& profile, const ExpertProfileModel& model) {
    const ExpertProfileModel& p = profile.model;
    const char* fix = "record a profile for this model with `strata profile`";
    if (p.name != model.name)
        return Status::error("recorded on model \"{}\", not on this one (\"{}\"): {}", p.name, model.name, fix);
    if (p.architecture != model.architecture)
        return Status::error("architecture: expected {} (the model's), got {}: {}", model.architecture, p.architecture, fix);
    if (p.n_layer != model.n_layer)
        return Status::error("n_layer: expected {} (the model's), got {}: {}", model.n_layer, p.n_layer, fix);
    if (p.n_expert != model.n_expert)
        return Status::error("n_expert: expected {} (the model's), got {}: {}", model.n_expert, p.n_expert, fix);
    if (p.n_expert_used != model.n_expert_used)
        return Status::error("n_expert_used: expected {} (the model's), got {}: {}", model.n_expert_used, p.n_expert_used,
                             fix);
    return Status::ok();
}

std::string expert_profile_to_json(const ExpertProfile& profile) {
    // Written by hand rather than by Json::dump(2) so each layer's counts stay on one line: a
    // 48-layer, 128-expert profile is 50 readable lines instead of 6,000.
    const ExpertProfileModel& m = profile.model;
    std::string out = fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n", kExpertProfileFormat, profile.version);
    out += fmt::format(
        "  \"model\": {{\"name\": {}, \"architecture\": {}, \"file_bytes\": {}, \"n_layer\": {}, \"n_expert\": {}, "
        "\"n_expert_used\": {}}},\n",
        json_string(m.name), json_string(m.architecture), m.file_bytes, m.n_layer, m.n_expert, m.n_expert_used);
    out += fmt::format("  \"prompts\": {},\n  \"tokens\": {},\n  \"generated_tokens\": {},\n  \"layers\": [\n",
                       profile.prompts, profile.tokens, profile.generated_tokens);
    for (size_t i = 0; i < profile.layers.size(); ++i) {
        const ExpertProfileLayer& L = profile.layers[i];
        out += fmt::format("    {{\"layer\": {}, \"counts\": [{}]}}{}\n", L.layer, fmt::join(L.counts, ", "),
                           i + 1 < profile.layers.size() ? "," : "");
    }
    out += "  ]\n}\n";
    return out;
}

Status save_expert_profile(const std::string& path, const ExpertProfile& profile) {
    Status s = write_string_to_file(path, expert_profile_to_json(profile));
    return s.with_context(fmt::format("writing expert profile {}", path));
}

std::vector<ExpertKey> hottest_first(const ExpertProfile& profile) {
    struct Ranked {
        uint64_t count;
        ExpertKey key;
    };
    std::vector<Ranked> all;
    for (const ExpertProfileLayer& L : profile.layers)
        for (size_t e = 0; e < L.counts.size(); ++e) all.push_back({L.counts[e], {L.layer, static_cast<uint32_t>(e)}});
    std::sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) {
        if (a.count != b.count) return a.count > b.count;
        if (a.key.layer != b.key.layer) return a.key.layer < b.key.layer;
        return a.key.expert < b.key.expert;
    });
    std::vector<ExpertKey> keys;
    keys.reserve(all.size());
    for (const Ranked& r : all) keys.push_back(r.key);
    return keys;
}

}  // namespace strata
