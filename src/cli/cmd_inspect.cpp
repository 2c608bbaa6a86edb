// `strata inspect FILE.gguf [--json] [--all-metadata] [--check-values]`: what a model file holds —
// architecture, hyper-parameters, tokenizer, every tensor, and the byte totals that decide
// placement; with --check-values, whether every weight dequantizes to finite numbers.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "cli/command.h"
#include "cli/progress.h"
#include "gguf/reader.h"
#include "model/tensor_roles.h"
#include "quant/check_values.h"

namespace strata::cli {
namespace {

struct InspectOptions {
    std::string path;
    bool json = false;
    bool all_metadata = false;
    bool check_values = false;
    int threads = 0;
};

// Every tensor dequantized and scanned (quant/check_values.h), with a progress bar on stderr.
ValueCheck run_value_check(const GgufFile& f, int threads) {
    ThreadPool pool(ThreadPool::Options{.threads = threads});
    ProgressBar bar("check values");
    ValueCheck c = check_tensor_values(f, pool, [&](uint64_t done, uint64_t total) { bar.update(done, total); });
    bar.finish();
    return c;
}

// The check's verdict in words: 0 when every value is finite, 1 with the bad tensors named.
int report_value_check(const GgufFile& f, const ValueCheck& c) {
    if (c.faults.empty()) {
        fmt::print("  values             finite in all {} tensors checked ({} of types without values skipped)\n",
                   c.tensors_checked, c.tensors_skipped);
        return 0;
    }
    for (const ValueFault& fault : c.faults) {
        fmt::print(stderr, "strata inspect: {}\n", fault.describe(tensor_type_info(f.tensor(fault.tensor)->type)->block_size));
    }
    fmt::print(stderr,
               "strata inspect: {} of {} tensors hold NaN or infinite weights: the file is damaged (download it "
               "again and compare its checksum) or was written by a broken quantizer (quantize it again)\n",
               c.faults.size(), c.tensors_checked);
    return 1;
}

std::string human_bytes(uint64_t b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(b);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.2f} {}", v, units[u]);
}

bool is_tokenizer_list(const std::string& key) {
    return key == "tokenizer.ggml.tokens" || key == "tokenizer.ggml.scores" || key == "tokenizer.ggml.token_type" ||
           key == "tokenizer.ggml.merges";
}

nlohmann::ordered_json value_to_json(const GgufValue& v) {
    switch (v.type) {
        case GgufValueType::BOOL: return v.as_int() != 0;
        case GgufValueType::F32: case GgufValueType::F64: return v.as_float();
        case GgufValueType::STRING: return v.as_string();
        case GgufValueType::U64: return v.as_uint();
        case GgufValueType::ARRAY: {
            auto arr = nlohmann::ordered_json::array();
            for (const auto& item : v.as_array().items) arr.push_back(value_to_json(item));
            return arr;
        }
        default: return v.as_int();
    }
}

struct TypeTotal {
    uint64_t tensors = 0, elements = 0, bytes = 0;
};

int run_inspect(const InspectOptions& opts) {
    auto opened = GgufFile::open(opts.path);
    if (!opened) return report_failure("inspect", opened.status().message());
    const GgufFile& f = *opened;
    std::string arch = f.get_string("general.architecture", "");
    ModelByteSummary bytes = summarize_model_bytes(f);
    std::map<std::string, TypeTotal> by_type;
    for (const auto& t : f.tensors()) {
        auto& tt = by_type[std::string(tensor_type_name(t.type))];
        tt.tensors++;
        tt.elements += t.n_elements;
        tt.bytes += t.n_bytes;
    }
    uint64_t params = 0;
    for (const auto& t : f.tensors()) params += t.n_elements;

    std::optional<ValueCheck> values;
    if (opts.check_values) values = run_value_check(f, opts.threads);

    if (opts.json) {
        nlohmann::ordered_json j;
        j["file"] = opts.path;
        j["files"] = f.file_paths();
        j["gguf_version"] = f.version();
        j["alignment"] = f.alignment();
        j["architecture"] = arch;
        j["parameters"] = params;
        auto& meta = j["metadata"] = nlohmann::ordered_json::object();
        for (const auto& e : f.metadata()) {
            if (!opts.all_metadata && is_tokenizer_list(e.key)) {
                meta[e.key] = fmt::format("{}[{}]", gguf_value_type_name(e.value.as_array().element_type),
                                          e.value.as_array().items.size());
            } else {
                meta[e.key] = value_to_json(e.value);
            }
        }
        auto& tensors = j["tensors"] = nlohmann::ordered_json::array();
        for (const auto& t : f.tensors()) {
            std::vector<uint64_t> shape(t.ne, t.ne + t.n_dims);
            tensors.push_back({{"name", t.name}, {"type", tensor_type_name(t.type)}, {"shape", shape},
                               {"bytes", t.n_bytes}, {"role", tensor_role_name(tensor_role(t.name))},
                               {"file", t.file_index}, {"offset", t.offset}});
        }
        auto& types = j["bytes_by_type"] = nlohmann::ordered_json::object();
        for (const auto& [name, tt] : by_type) types[name] = {{"tensors", tt.tensors}, {"bytes", tt.bytes}};
        auto& roles = j["bytes_by_role"] = nlohmann::ordered_json::object();
        for (int r = 0; r < kTensorRoleCount; ++r) {
            if (bytes.bytes_by_role[r]) roles[std::string(tensor_role_name(static_cast<TensorRole>(r)))] = bytes.bytes_by_role[r];
        }
        j["total_bytes"] = bytes.total_bytes;
        if (bytes.expert_count > 0) {
            j["moe"] = {{"experts", bytes.expert_count}, {"experts_used", bytes.experts_used},
                        {"moe_layers", bytes.moe_layers}, {"bytes_per_expert", bytes.bytes_per_expert}};
        }
        j["bytes_per_token"] = bytes.bytes_per_token;
        if (values) {
            auto faults = nlohmann::ordered_json::array();
            for (const ValueFault& fault : values->faults) {
                faults.push_back({{"tensor", fault.tensor}, {"row", fault.row}, {"block", fault.block},
                                  {"value", fault.value}, {"kind", fault.nan ? "nan" : "infinity"}});
            }
            j["values"] = {{"tensors_checked", values->tensors_checked}, {"tensors_skipped", values->tensors_skipped},
                           {"faults", faults}};
        }
        fmt::print("{}\n", j.dump(2));
        return values && !values->faults.empty() ? 1 : 0;
    }

    fmt::print("file          {}{}\n", opts.path, f.file_count() > 1 ? fmt::format(" (+{} more parts)", f.file_count() - 1) : "");
    fmt::print("format        GGUF v{}, alignment {}, {} metadata keys, {} tensors, {}\n", f.version(), f.alignment(),
               f.metadata().size(), f.tensors().size(), human_bytes(f.total_file_bytes()));
    fmt::print("architecture  {}{}\n", arch.empty() ? "(none)" : arch,
               f.find("general.name") ? fmt::format("  \"{}\"", f.get_string("general.name", "")) : "");
    fmt::print("parameters    {:.3f} B\n", static_cast<double>(params) / 1e9);

    fmt::print("\nhyper-parameters\n");
    for (const auto& e : f.metadata()) {
        bool model_key = !arch.empty() && e.key.rfind(arch + ".", 0) == 0;
        if (model_key || (opts.all_metadata && !e.key.starts_with("tokenizer."))) {
            fmt::print("  {:<44} {}\n", e.key, e.value.to_display_string());
        }
    }

    fmt::print("\ntokenizer\n");
    for (const auto& e : f.metadata()) {
        if (!e.key.starts_with("tokenizer.")) continue;
        if (e.key == "tokenizer.chat_template") {
            fmt::print("  {:<44} {} bytes\n", e.key, e.value.as_string().size());
        } else if (is_tokenizer_list(e.key) && !opts.all_metadata) {
            fmt::print("  {:<44} {} entries\n", e.key, e.value.as_array().items.size());
        } else {
            fmt::print("  {:<44} {}\n", e.key, e.value.to_display_string());
        }
    }

    fmt::print("\ntensors\n  {:<40} {:<8} {:<24} {:>12}  {}\n", "name", "type", "shape", "bytes", "role");
    for (const auto& t : f.tensors()) {
        fmt::print("  {:<40} {:<8} {:<24} {:>12}  {}\n", t.name, tensor_type_name(t.type), t.shape_string(), t.n_bytes,
                   tensor_role_name(tensor_role(t.name)));
    }

    fmt::print("\nby type\n");
    for (const auto& [name, tt] : by_type) {
        fmt::print("  {:<8} {:>5} tensors {:>14} values {:>12}\n", name, tt.tensors, tt.elements, human_bytes(tt.bytes));
    }
    fmt::print("\nby role\n");
    for (int r = 0; r < kTensorRoleCount; ++r) {
        if (!bytes.bytes_by_role[r]) continue;
        fmt::print("  {:<18} {:>12}  {:5.1f}%\n", tensor_role_name(static_cast<TensorRole>(r)),
                   human_bytes(bytes.bytes_by_role[r]),
                   100.0 * static_cast<double>(bytes.bytes_by_role[r]) / static_cast<double>(std::max<uint64_t>(1, bytes.total_bytes)));
    }
    fmt::print("  {:<18} {:>12}\n", "total", human_bytes(bytes.total_bytes));
    if (bytes.expert_count > 0) {
        fmt::print("\nmixture of experts\n  {} experts per layer, {} used per token, {} MoE layers\n", bytes.expert_count,
                   bytes.experts_used, bytes.moe_layers);
        fmt::print("  bytes per expert   {}\n", human_bytes(bytes.bytes_per_expert));
    }
    fmt::print("  bytes per token    {} (weights read to decode one token, KV cache excluded)\n",
               human_bytes(bytes.bytes_per_token));
    return values ? report_value_check(f, *values) : 0;
}

CommandRegistration registration("inspect", "Describe a GGUF model file: metadata, tensors, byte totals",
                                 [](CLI::App& app) {
                                     auto opts = std::make_shared<InspectOptions>();
                                     app.add_option("file", opts->path, "GGUF file (first part of a split model)")
                                         ->required();
                                     app.add_flag("--json", opts->json, "Machine-readable output");
                                     app.add_flag("--all-metadata", opts->all_metadata,
                                                  "Print every metadata key, vocabularies included");
                                     app.add_flag("--check-values", opts->check_values,
                                                  "Dequantize every weight and report NaN or infinite values by "
                                                  "tensor, row and block (reads the whole file)");
                                     app.add_option("-t,--threads", opts->threads, "CPU threads for --check-values (0: all)");
                                     return [opts] { return run_inspect(*opts); };
                                 });

}  // namespace
}  // namespace strata::cli
