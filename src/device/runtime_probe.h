#pragma once
// Asking the vendor runtimes, loaded at run time, which GPUs they see: the CUDA driver API
// (libcuda.so.1 / nvcuda.dll), NVML for live statistics (libnvidia-ml.so.1 / nvml.dll) and the
// HIP runtime (libamdhip64.so / amdhip64*.dll). Any failure — library absent, init error, no
// device — yields a report saying so and no devices; a probe never throws or aborts.
//
//   RuntimeListing cuda = probe_cuda();
//   fmt::print("{}: {}\n", cuda.report.name, cuda.report.status);
//   for (GpuDevice& d : cuda.devices) ...

#include <string>
#include <vector>

#include "device/device.h"

namespace strata {
struct HipSdk;
}

namespace strata {

struct RuntimeReport {
    std::string name;     // "CUDA driver", "NVML", "HIP runtime"
    bool loaded = false;  // the library loaded and initialised
    std::string version;  // "12.4", "550.54.15", "6.2"; empty when unknown
    std::string status;   // "2 devices", "not found: could not load libcuda.so.1", "cuInit failed: ..."
};

struct RuntimeListing {
    RuntimeReport report;
    std::vector<GpuDevice> devices;
};

RuntimeListing probe_cuda();
RuntimeListing probe_nvml();
// Name, memory, PCI bus id and ordinal only: hipDeviceProp_t changed layout between HIP 5 and
// 6, so reading it without the matching header risks garbage. The arch and wave size come from
// the KFD node (Linux) or hipInfo (Windows) with the same bus id.
// On Windows the runtime DLL is looked for by name first, then in each HIP SDK found (hip_sdk.h).
RuntimeListing probe_hip(const std::vector<HipSdk>& sdks);

}  // namespace strata
