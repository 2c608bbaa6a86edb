#include "cli/environment.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>  // environ (POSIX; mingw-w64 declares it in stdlib.h)

#include "backend/cpu/cpu_op_profile.h"
#include "backend/gpu/op_profiler.h"

namespace strata::cli {
namespace {

const char* value_of(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
}
// A switch that is on unless set to "0".
bool on_unless_zero(const char* name) {
    const char* v = value_of(name);
    return v == nullptr || std::strcmp(v, "0") != 0;
}
bool equals(const char* name, const char* value) {
    const char* v = value_of(name);
    return v != nullptr && std::strcmp(v, value) == 0;
}
// Set and not "0".
bool set_on(const char* name) {
    const char* v = value_of(name);
    return v != nullptr && std::strcmp(v, "0") != 0;
}
int int_of(const char* name) {
    const char* v = value_of(name);
    return v ? std::atoi(v) : 0;
}
// Every variable whose name starts with prefix, as {name, value}. (Windows keeps the names' case
// as set; the SDK installer writes them upper case.)
std::vector<std::pair<std::string, std::string>> variables_named_like(const std::string& prefix) {
    std::vector<std::pair<std::string, std::string>> out;
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text(*entry);
        const size_t eq = text.find('=');
        if (eq == std::string::npos || eq <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0) continue;
        out.emplace_back(text.substr(0, eq), text.substr(eq + 1));
    }
    return out;
}
std::optional<double> double_of(const char* name) {
    const char* v = value_of(name);
    return v ? std::optional<double>(std::atof(v)) : std::nullopt;
}
std::optional<uint64_t> bytes_of(const char* name) {
    const char* v = value_of(name);
    return v ? std::optional<uint64_t>(std::strtoull(v, nullptr, 10)) : std::nullopt;
}

EnvironmentTuning read_environment() {
    EnvironmentTuning t;

    t.cpu.prefetch_bytes = bytes_of("STRATA_CPU_PREFETCH_BYTES");
    t.cpu.tiles = !on_unless_zero("STRATA_CPU_TILES")        ? CpuTiles::None
                  : equals("STRATA_CPU_TILES", "cached")     ? CpuTiles::Cached
                                                             : CpuTiles::All;
    t.cpu.attention_all_exp = equals("STRATA_CPU_ATTN_ALL_EXP", "1");
    t.cpu_profile = set_on("STRATA_CPU_PROFILE");

    gpu::GpuTuning& g = t.gpu;
    g.mmq = on_unless_zero("STRATA_GPU_MMQ");
    g.mmq_rows = int_of("STRATA_GPU_MMQ_ROWS");
    g.tensor_cores = on_unless_zero("STRATA_GPU_TENSOR_CORES");
    g.tensor_core_rows = int_of("STRATA_GPU_TC_ROWS");
    g.int8_matvec = !equals("STRATA_GPU_MATVEC", "f32");
    g.typed_matvec = on_unless_zero("STRATA_GPU_MATVEC_TYPED");
    g.graphs = on_unless_zero("STRATA_GPU_GRAPHS");
    g.chained_launches = on_unless_zero("STRATA_GPU_PDL");
    g.flash_mma = on_unless_zero("STRATA_GPU_FLASH_MMA");
    g.decode_mma = on_unless_zero("STRATA_GPU_DECODE_MMA");
    g.attention_max_splits = int_of("STRATA_GPU_ATTN_MAX_SPLITS");
    g.device_sampling = on_unless_zero("STRATA_GPU_SAMPLING");
    g.peer_access = on_unless_zero("STRATA_GPU_PEER");
    if (const char* v = value_of("STRATA_GPU_COLLECTIVE")) g.collective = v;
    if (const char* v = value_of("STRATA_NCCL_LIBRARY")) g.nccl_library = v;
    g.nccl_graphs = on_unless_zero("STRATA_NCCL_GRAPHS");
    g.ablation = gpu::parse_op_ablation(std::getenv("STRATA_GPU_ABLATE"), std::getenv("STRATA_GPU_EXTRA_LAUNCHES"));
    t.gpu_profile = set_on("STRATA_GPU_PROFILE");

    TierTuning& r = t.tiers;
    r.early_combine = on_unless_zero("STRATA_TIERS_EARLY_COMBINE");
    r.warming = !on_unless_zero("STRATA_TIERS_WARM")   ? CacheWarming::Off
                : equals("STRATA_TIERS_WARM", "read")  ? CacheWarming::Read
                                                       : CacheWarming::Shared;
    r.routing_flags = on_unless_zero("STRATA_TIERS_ROUTING_FLAG");
    r.tagged_words = on_unless_zero("STRATA_TIERS_TAGGED");
    r.decode_done_after_combine = equals("STRATA_TIERS_STEP_DONE", "combine");
    r.fixed_copies_ahead = equals("STRATA_TIERS_AHEAD", "fixed");
    r.link_backlog = on_unless_zero("STRATA_TIERS_LINK_BACKLOG");
    r.stream_ahead = on_unless_zero("STRATA_TIERS_STREAM_AHEAD");
    r.scan_coverage = double_of("STRATA_TIERS_SCAN_COVERAGE");
    r.staging_slots = bytes_of("STRATA_TIERS_STAGING");
    r.decode_share_bias = double_of("STRATA_TIERS_SHARE_BIAS");
    r.timeline_pass = int_of("STRATA_TIERS_TIMELINE");
    return t;
}

}  // namespace

const EnvironmentTuning& environment_tuning() {
    static const EnvironmentTuning tuning = [] {
        EnvironmentTuning t = read_environment();
        if (t.gpu.ablation.active()) {
            std::fprintf(stderr,
                         "strata: STRATA_GPU_ABLATE / STRATA_GPU_EXTRA_LAUNCHES are set: a timing study, every "
                         "output of the GPU forward is wrong\n");
        }
        return t;
    }();
    return tuning;
}

const DeviceEnvironment& device_environment() {
    static const DeviceEnvironment environment = [] {
        DeviceEnvironment e;
        auto get = [](const char* name) -> std::optional<std::string> {
            const char* v = std::getenv(name);
            return v ? std::optional<std::string>(v) : std::nullopt;
        };
        e.visibility = {get("CUDA_VISIBLE_DEVICES"), get("HIP_VISIBLE_DEVICES"), get("ROCR_VISIBLE_DEVICES")};
        if (const char* marker = value_of(kSelfVisibilityMarker)) e.self_rerun = parse_self_visibility_marker(marker);
        if (e.self_rerun) e.visibility.set_by_strata = e.self_rerun->variable;
        e.hip_sdk.hip_path = get("HIP_PATH").value_or("");
        e.hip_sdk.versioned = variables_named_like("HIP_PATH_");
        e.hip_sdk.program_files = get("ProgramFiles").value_or("");
        e.self_visibility_disabled = set_on("STRATA_NO_SELF_VISIBILITY");
        return e;
    }();
    return environment;
}

void apply_environment_tuning(ComputeOptions& options) {
    const EnvironmentTuning& t = environment_tuning();
    options.cpu_tuning = t.cpu;
    options.gpu_tuning = t.gpu;
    if (t.cpu_profile) enable_cpu_op_profiling(true);
    if (t.gpu_profile) gpu::enable_op_profiling(true);
}

}  // namespace strata::cli
