// The NVIDIA half of GpuStatsReader: NVML through dlopen, initialised once per reader (nvmlInit
// costs milliseconds; a scrape should not). Signatures and structs are nvml.h's, stable across
// drivers for these entry points (runtime_nvidia.cpp reads the same ones for the listing).
#include <fmt/format.h>

#include "device/dynamic_library.h"
#include "device/gpu_stats.h"

namespace strata {
namespace {

using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0, kNvmlClockSm = 1;

// nvmlPciInfo_t (v3): busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32].
struct NvmlPciInfo {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
};
struct NvmlMemory {
    unsigned long long total, free, used;
};
struct NvmlUtilization {
    unsigned gpu, memory;
};

}  // namespace

struct GpuStatsReader::Nvml {
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*count)(unsigned*) = nullptr;
    NvmlReturn (*by_index)(unsigned, NvmlDevice*) = nullptr;
    NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
    NvmlReturn (*pci)(NvmlDevice, NvmlPciInfo*) = nullptr;
    NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
    NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*link_generation)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*link_width)(NvmlDevice, unsigned*) = nullptr;
};

GpuStatsReader::GpuStatsReader(Options options) : options_(std::move(options)) {
    if (!options_.use_nvml) {
        nvml_status_ = "NVML: not used";
        return;
    }
#ifdef _WIN32
    static DynamicLibrary lib = DynamicLibrary::open({"nvml.dll"});
#else
    static DynamicLibrary lib = DynamicLibrary::open({"libnvidia-ml.so.1", "libnvidia-ml.so"});
#endif
    if (!lib.loaded()) {
        nvml_status_ = fmt::format("NVML: not found ({})", lib.error());
        return;
    }
    auto init = lib.symbol<NvmlReturn (*)()>("nvmlInit_v2");
    auto n = std::make_unique<Nvml>();
    n->shutdown = lib.symbol<decltype(n->shutdown)>("nvmlShutdown");
    n->count = lib.symbol<decltype(n->count)>("nvmlDeviceGetCount_v2");
    n->by_index = lib.symbol<decltype(n->by_index)>("nvmlDeviceGetHandleByIndex_v2");
    n->name = lib.symbol<decltype(n->name)>("nvmlDeviceGetName");
    n->pci = lib.symbol<decltype(n->pci)>("nvmlDeviceGetPciInfo_v3");
    n->memory = lib.symbol<decltype(n->memory)>("nvmlDeviceGetMemoryInfo");
    n->utilization = lib.symbol<decltype(n->utilization)>("nvmlDeviceGetUtilizationRates");
    n->temperature = lib.symbol<decltype(n->temperature)>("nvmlDeviceGetTemperature");
    n->power = lib.symbol<decltype(n->power)>("nvmlDeviceGetPowerUsage");
    n->clock = lib.symbol<decltype(n->clock)>("nvmlDeviceGetClockInfo");
    n->link_generation = lib.symbol<decltype(n->link_generation)>("nvmlDeviceGetCurrPcieLinkGeneration");
    n->link_width = lib.symbol<decltype(n->link_width)>("nvmlDeviceGetCurrPcieLinkWidth");
    if (!init || !n->count || !n->by_index) {
        nvml_status_ = "NVML: the library lacks nvmlInit_v2 (driver too old)";
        return;
    }
    if (NvmlReturn r = init(); r != kNvmlSuccess) {
        nvml_status_ = fmt::format("NVML: nvmlInit failed (error {})", r);
        return;
    }
    nvml_status_ = "NVML: ready";
    nvml_ = std::move(n);
}

// NVML counts its initialisations: this shutdown ends only this reader's.
GpuStatsReader::~GpuStatsReader() {
    if (nvml_ && nvml_->shutdown) nvml_->shutdown();
}

std::vector<GpuStatsSample> GpuStatsReader::sample_nvml() const {
    std::vector<GpuStatsSample> out;
    if (!nvml_) return out;
    const Nvml& n = *nvml_;
    unsigned count = 0;
    if (n.count(&count) != kNvmlSuccess) return out;
    for (unsigned i = 0; i < count; ++i) {
        NvmlDevice dev = nullptr;
        if (n.by_index(i, &dev) != kNvmlSuccess) continue;
        GpuStatsSample s;
        s.vendor = GpuVendor::nvidia;
        s.source = "nvml";
        char text[96] = {};
        if (n.name && n.name(dev, text, sizeof(text)) == kNvmlSuccess) s.name = text;
        NvmlPciInfo pci{};
        if (n.pci && n.pci(dev, &pci) == kNvmlSuccess) s.pci = PciAddress{pci.domain, pci.bus, pci.device, 0};
        NvmlMemory mem{};
        if (n.memory && n.memory(dev, &mem) == kNvmlSuccess) {
            s.vram_total_bytes = mem.total;
            s.stats.vram_used_bytes = mem.used;
        }
        NvmlUtilization util{};
        if (n.utilization && n.utilization(dev, &util) == kNvmlSuccess) s.stats.utilization_percent = util.gpu;
        unsigned v = 0;
        if (n.temperature && n.temperature(dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess) s.stats.temperature_c = v;
        if (n.power && n.power(dev, &v) == kNvmlSuccess) s.stats.power_w = v / 1000.0;  // milliwatts
        if (n.clock && n.clock(dev, kNvmlClockSm, &v) == kNvmlSuccess) s.stats.clock_mhz = v;
        if (n.link_generation && n.link_generation(dev, &v) == kNvmlSuccess) s.stats.pcie_generation = static_cast<int>(v);
        if (n.link_width && n.link_width(dev, &v) == kNvmlSuccess) s.stats.pcie_width = static_cast<int>(v);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace strata
