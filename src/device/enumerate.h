#pragma once
// Every GPU on this machine from every source, merged and classified: the single entry point
// that `strata devices`, `--device` and setup use.
//
//   EnumerateOptions opts;
//   opts.visibility = ...;    // read at the edge (cli/environment.h), as the runtimes will read it
//   opts.classify.archs = compiled_gpu_archs();
//   DeviceListing listing = enumerate_devices(opts);
//   AutoPick pick = pick_auto_device(listing.devices);

#include <string>
#include <vector>

#include "device/device.h"
#include "device/hip_sdk.h"
#include "device/merge.h"
#include "device/runtime_probe.h"

namespace strata {

struct EnumerateOptions {
    std::string sysfs_root = "/";
    bool probe_runtimes = true;  // false for fake sysfs trees: only the files under sysfs_root count
    VisibilityVariables visibility;
    HipSdkEnvironment hip_sdk;  // Windows: where to look for the HIP SDK (hip_sdk.h)
    ClassifyOptions classify;
};

struct DeviceListing {
    std::vector<GpuDevice> devices;
    std::vector<RuntimeReport> runtimes;  // what each runtime said, for the listing's header
};

DeviceListing enumerate_devices(const EnumerateOptions& options);

// The GPU archs this binary's kernels were compiled for (STRATA_GPU_ARCHS at configure time).
ArchSet compiled_gpu_archs();
std::string compiled_gpu_archs_text();  // the raw list, "" for a CPU-only build

}  // namespace strata
