#include "runtime/weights_load.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "plan/host_ram.h"
#include "plan/units.h"

namespace strata {

GgufLoad choose_gguf_load(WeightsLoad mode, bool runs_on_cpu, bool huge_pages, uint64_t file_bytes,
                          uint64_t available_ram_bytes) {
    if (mode != WeightsLoad::Auto) return mode == WeightsLoad::Memory ? GgufLoad::Memory : GgufLoad::Map;
    const bool fits = file_bytes > 0 && file_bytes <= available_ram_bytes / 4 * 3;
    return runs_on_cpu && huge_pages && fits ? GgufLoad::Memory : GgufLoad::Map;
}

bool transparent_huge_pages_available() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string setting;
    std::getline(in, setting);  // e.g. "always [madvise] never": the bracketed one is in force
    return setting.find("[always]") != std::string::npos || setting.find("[madvise]") != std::string::npos;
}

GgufLoad gguf_load_for(const ComputeOptions& compute, const std::string& path) {
    if (compute.weights_load != WeightsLoad::Auto) {
        return choose_gguf_load(compute.weights_load, false, false, 0, 0);
    }
    // `auto` runs on the CPU when no GPU can be used; with one it may still pick a GPU forward.
    const bool on_cpu = compute.device == ComputeDevice::Cpu ||
                        (compute.device == ComputeDevice::Auto && !gpu_unavailable_reason().empty());
    if (!on_cpu) return GgufLoad::Map;
    uint64_t bytes = 0;
    for (const std::string& part : gguf_split_paths(path, 0)) {
        std::error_code error;
        const uintmax_t size = std::filesystem::file_size(part, error);
        if (error) return GgufLoad::Map;  // the open that follows reports the file's problem
        bytes += size;
    }
    const Result<uint64_t> ram = host_available_ram();
    return choose_gguf_load(compute.weights_load, on_cpu, transparent_huge_pages_available(), bytes, ram ? *ram : 0);
}

}  // namespace strata
