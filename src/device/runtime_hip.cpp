// HIP runtime through dlopen. Only entry points whose signatures are the same in HIP 5 and 6.
#include <fmt/format.h>

#include "device/dynamic_library.h"
#include "device/hip_sdk.h"
#include "device/runtime_probe.h"

namespace strata {

RuntimeListing probe_hip([[maybe_unused]] const std::vector<HipSdk>& sdks) {
    RuntimeListing out;
    out.report.name = "HIP runtime";
#ifdef _WIN32
    // Loaded once per process (never unloaded, dynamic_library.h): the first call's SDKs decide.
    static DynamicLibrary lib = DynamicLibrary::open(hip_runtime_library_candidates(sdks));
#else
    static DynamicLibrary lib = DynamicLibrary::open({"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"});
#endif
    if (!lib.loaded()) {
        out.report.status = fmt::format("not found ({})", lib.error());
        return out;
    }
    using Err = int;
    auto runtime_version = lib.symbol<Err (*)(int*)>("hipRuntimeGetVersion");
    auto count_fn = lib.symbol<Err (*)(int*)>("hipGetDeviceCount");
    auto name_fn = lib.symbol<Err (*)(char*, int, int)>("hipDeviceGetName");
    auto total_mem_fn = lib.symbol<Err (*)(size_t*, int)>("hipDeviceTotalMem");
    auto bus_id_fn = lib.symbol<Err (*)(char*, int, int)>("hipDeviceGetPCIBusId");
    auto error_string = lib.symbol<const char* (*)(Err)>("hipGetErrorString");
    if (!count_fn) {
        out.report.status = "library lacks hipGetDeviceCount";
        return out;
    }
    int version = 0;
    // HIP encodes major*10000000 + minor*100000 + patch.
    if (runtime_version && runtime_version(&version) == 0) out.report.version = fmt::format("{}.{}", version / 10000000, (version / 100000) % 100);
    int count = 0;
    // Without an AMD GPU this returns an error rather than zero (AMD_BUILD.md): no device.
    if (Err r = count_fn(&count); r != 0) {
        const char* text = error_string ? error_string(r) : nullptr;
        out.report.status = fmt::format("hipGetDeviceCount failed (error {}{}{})", r, text ? ": " : "", text ? text : "");
        return out;
    }
    out.report.loaded = true;
    for (int i = 0; i < count; ++i) {
        GpuDevice d;
        d.vendor = GpuVendor::amd;
        d.runtime_ordinal = i;
        d.has_compute_driver = true;
        d.sources = {"hip"};
        char text[256] = {};
        if (name_fn && name_fn(text, sizeof(text) - 1, i) == 0) d.name = text;
        size_t total = 0;
        if (total_mem_fn && total_mem_fn(&total, i) == 0) d.vram_total_bytes = total;
        char bus[64] = {};
        if (bus_id_fn && bus_id_fn(bus, sizeof(bus) - 1, i) == 0) d.pci = PciAddress::parse(bus);
        out.devices.push_back(std::move(d));
    }
    out.report.status = fmt::format("{} device{}", count, count == 1 ? "" : "s");
    return out;
}

}  // namespace strata
