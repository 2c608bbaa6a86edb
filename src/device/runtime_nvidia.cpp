// CUDA driver API and NVML through dlopen. Signatures and enum values are those of cuda.h and
// nvml.h, which are stable across driver versions for the entry points used here.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "device/dynamic_library.h"
#include "device/gpu_arch.h"
#include "device/runtime_probe.h"

namespace strata {
namespace {

using CUresult = int;
using CUdevice = int;
constexpr int kAttrWarpSize = 10, kAttrMultiprocessorCount = 16, kAttrIntegrated = 18, kAttrPciBusId = 33,
              kAttrPciDeviceId = 34, kAttrPciDomainId = 50, kAttrCcMajor = 75, kAttrCcMinor = 76;

std::string format_uuid(const unsigned char b[16]) {
    return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

std::string plural(int n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); }

}  // namespace

RuntimeListing probe_cuda() {
    RuntimeListing out;
    out.report.name = "CUDA driver";
#ifdef _WIN32
    static DynamicLibrary lib = DynamicLibrary::open({"nvcuda.dll"});
#else
    static DynamicLibrary lib = DynamicLibrary::open({"libcuda.so.1", "libcuda.so"});
#endif
    if (!lib.loaded()) {
        out.report.status = fmt::format("not found ({}): no NVIDIA driver", lib.error());
        return out;
    }
    auto cu_init = lib.symbol<CUresult (*)(unsigned)>("cuInit");
    auto cu_driver_version = lib.symbol<CUresult (*)(int*)>("cuDriverGetVersion");
    auto cu_count = lib.symbol<CUresult (*)(int*)>("cuDeviceGetCount");
    auto cu_get = lib.symbol<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
    auto cu_name = lib.symbol<CUresult (*)(char*, int, CUdevice)>("cuDeviceGetName");
    auto cu_total_mem = lib.symbol<CUresult (*)(size_t*, CUdevice)>("cuDeviceTotalMem_v2");
    auto cu_attr = lib.symbol<CUresult (*)(int*, int, CUdevice)>("cuDeviceGetAttribute");
    auto cu_uuid = lib.symbol<CUresult (*)(unsigned char*, CUdevice)>("cuDeviceGetUuid_v2");
    if (!cu_uuid) cu_uuid = lib.symbol<CUresult (*)(unsigned char*, CUdevice)>("cuDeviceGetUuid");
    auto cu_error_string = lib.symbol<CUresult (*)(CUresult, const char**)>("cuGetErrorString");
    if (!cu_init || !cu_count || !cu_get || !cu_name || !cu_total_mem || !cu_attr) {
        out.report.status = "driver library lacks the CUDA driver API entry points (driver too old)";
        return out;
    }
    auto describe = [&](CUresult r) {
        const char* text = nullptr;
        if (cu_error_string && cu_error_string(r, &text) == 0 && text) return fmt::format("error {}: {}", r, text);
        return fmt::format("error {}", r);
    };
    if (CUresult r = cu_init(0); r != 0) {
        // CUDA_ERROR_NO_DEVICE (100) is an answer: the driver works and sees no device, e.g.
        // when CUDA_VISIBLE_DEVICES hides them all; the caller then marks NVML's cards hidden.
        out.report.loaded = r == 100;
        out.report.status = r == 100 ? fmt::format("0 devices (cuInit: {})", describe(r)) : fmt::format("cuInit failed ({})", describe(r));
        return out;
    }
    int version = 0;
    if (cu_driver_version && cu_driver_version(&version) == 0) out.report.version = fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
    int count = 0;
    if (CUresult r = cu_count(&count); r != 0) {
        out.report.status = fmt::format("cuDeviceGetCount failed ({})", describe(r));
        return out;
    }
    out.report.loaded = true;
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        if (cu_get(&dev, i) != 0) continue;
        GpuDevice d;
        d.vendor = GpuVendor::nvidia;
        d.runtime_ordinal = i;  // CUDA's ordinal already reflects CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER
        d.has_compute_driver = true;
        d.sources = {"cuda"};
        char name[256] = {};
        if (cu_name(name, sizeof(name) - 1, dev) == 0) d.name = name;
        size_t total = 0;
        if (cu_total_mem(&total, dev) == 0) d.vram_total_bytes = total;
        auto attr = [&](int which) {
            int v = -1;
            return cu_attr(&v, which, dev) == 0 ? v : -1;
        };
        int major = attr(kAttrCcMajor), minor = attr(kAttrCcMinor);
        if (major >= 0 && minor >= 0) d.arch = cuda_arch_name(major, minor);
        d.wave_size = std::max(attr(kAttrWarpSize), 0);
        d.compute_units = std::max(attr(kAttrMultiprocessorCount), 0);
        int integrated = attr(kAttrIntegrated);
        d.kind = integrated == 1 ? GpuKind::integrated : integrated == 0 ? GpuKind::discrete : GpuKind::unknown;
        int domain = attr(kAttrPciDomainId), bus = attr(kAttrPciBusId), device = attr(kAttrPciDeviceId);
        if (domain >= 0 && bus >= 0 && device >= 0) d.pci = PciAddress{static_cast<uint32_t>(domain), static_cast<uint32_t>(bus), static_cast<uint32_t>(device), 0};
        unsigned char uuid[16] = {};
        if (cu_uuid && cu_uuid(uuid, dev) == 0) d.uuid = format_uuid(uuid);
        out.devices.push_back(std::move(d));
    }
    out.report.status = plural(count, "device");
    return out;
}

RuntimeListing probe_nvml() {
    RuntimeListing out;
    out.report.name = "NVML";
#ifdef _WIN32
    static DynamicLibrary lib = DynamicLibrary::open({"nvml.dll"});
#else
    static DynamicLibrary lib = DynamicLibrary::open({"libnvidia-ml.so.1", "libnvidia-ml.so"});
#endif
    if (!lib.loaded()) {
        out.report.status = fmt::format("not found ({})", lib.error());
        return out;
    }
    using Ret = int;
    using Dev = void*;
    // nvmlPciInfo_t as of nvml.h v3: busIdLegacy[16], domain, bus, device, pciDeviceId,
    // pciSubSystemId, busId[32].
    struct PciInfo {
        char bus_id_legacy[16];
        unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
        char bus_id[32];
    };
    struct Memory {
        unsigned long long total, free, used;
    };
    struct Utilization {
        unsigned gpu, memory;
    };
    auto init = lib.symbol<Ret (*)()>("nvmlInit_v2");
    auto shutdown = lib.symbol<Ret (*)()>("nvmlShutdown");
    auto driver_version = lib.symbol<Ret (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
    auto count_fn = lib.symbol<Ret (*)(unsigned*)>("nvmlDeviceGetCount_v2");
    auto by_index = lib.symbol<Ret (*)(unsigned, Dev*)>("nvmlDeviceGetHandleByIndex_v2");
    auto name_fn = lib.symbol<Ret (*)(Dev, char*, unsigned)>("nvmlDeviceGetName");
    auto uuid_fn = lib.symbol<Ret (*)(Dev, char*, unsigned)>("nvmlDeviceGetUUID");
    auto pci_fn = lib.symbol<Ret (*)(Dev, PciInfo*)>("nvmlDeviceGetPciInfo_v3");
    auto memory_fn = lib.symbol<Ret (*)(Dev, Memory*)>("nvmlDeviceGetMemoryInfo");
    auto util_fn = lib.symbol<Ret (*)(Dev, Utilization*)>("nvmlDeviceGetUtilizationRates");
    auto temp_fn = lib.symbol<Ret (*)(Dev, int, unsigned*)>("nvmlDeviceGetTemperature");
    auto power_fn = lib.symbol<Ret (*)(Dev, unsigned*)>("nvmlDeviceGetPowerUsage");
    auto link_gen_fn = lib.symbol<Ret (*)(Dev, unsigned*)>("nvmlDeviceGetCurrPcieLinkGeneration");
    auto link_width_fn = lib.symbol<Ret (*)(Dev, unsigned*)>("nvmlDeviceGetCurrPcieLinkWidth");
    auto cc_fn = lib.symbol<Ret (*)(Dev, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
    auto clock_fn = lib.symbol<Ret (*)(Dev, int, unsigned*)>("nvmlDeviceGetClockInfo");
    if (!init || !count_fn || !by_index) {
        out.report.status = "library lacks nvmlInit_v2 (driver too old)";
        return out;
    }
    if (Ret r = init(); r != 0) {
        out.report.status = fmt::format("nvmlInit failed (error {})", r);
        return out;
    }
    char version[96] = {};
    if (driver_version && driver_version(version, sizeof(version)) == 0) out.report.version = version;
    unsigned count = 0;
    if (count_fn(&count) != 0) count = 0;
    out.report.loaded = true;
    for (unsigned i = 0; i < count; ++i) {
        Dev dev = nullptr;
        if (by_index(i, &dev) != 0) continue;
        GpuDevice d;
        d.vendor = GpuVendor::nvidia;
        d.has_compute_driver = true;
        d.sources = {"nvml"};
        char text[96] = {};
        if (name_fn && name_fn(dev, text, sizeof(text)) == 0) d.name = text;
        std::memset(text, 0, sizeof(text));
        if (uuid_fn && uuid_fn(dev, text, sizeof(text)) == 0) d.uuid = text;
        PciInfo pci{};
        if (pci_fn && pci_fn(dev, &pci) == 0) {
            d.pci = PciAddress{pci.domain, pci.bus, pci.device, 0};
            d.pci_device_id = static_cast<uint16_t>(pci.pci_device_id >> 16);  // high half; low half is the vendor
        }
        Memory mem{};
        if (memory_fn && memory_fn(dev, &mem) == 0) {
            d.vram_total_bytes = mem.total;
            d.stats.vram_used_bytes = mem.used;
        }
        Utilization util{};
        if (util_fn && util_fn(dev, &util) == 0) d.stats.utilization_percent = util.gpu;
        unsigned v = 0;
        if (temp_fn && temp_fn(dev, 0 /* NVML_TEMPERATURE_GPU */, &v) == 0) d.stats.temperature_c = v;
        if (power_fn && power_fn(dev, &v) == 0) d.stats.power_w = v / 1000.0;  // milliwatts
        if (clock_fn && clock_fn(dev, 1 /* NVML_CLOCK_SM */, &v) == 0) d.stats.clock_mhz = v;
        if (link_gen_fn && link_gen_fn(dev, &v) == 0) d.stats.pcie_generation = static_cast<int>(v);
        if (link_width_fn && link_width_fn(dev, &v) == 0) d.stats.pcie_width = static_cast<int>(v);
        int major = 0, minor = 0;
        if (cc_fn && cc_fn(dev, &major, &minor) == 0) d.arch = cuda_arch_name(major, minor);
        out.devices.push_back(std::move(d));
    }
    if (shutdown) shutdown();
    out.report.status = plural(static_cast<int>(count), "device");
    return out;
}

}  // namespace strata
