#pragma once
// `--device` as every model-loading command reads it (run, bench, parity, ...): the flag's text,
// the merged and classified device list and the user's visibility variables go in; the runtime
// ordinal to load on and the one line Strata prints about its choice come out. The resolution is
// pure (resolve_device_flag) so every machine of issue 7 is a unit test; enumerating this
// machine and printing are the callers' business.
//
//   DeviceListing listing = enumerate_devices(options);
//   auto r = resolve_device_flag(listing.devices, "pci:0000:03:00.0", visibility);
//   if (!r) return report_failure("run", r.status().message());
//   fmt::print(stderr, "{}\n", r->explanation);  // "strata: using CUDA GPU 1 (pci 0000:03:00.0, ...): ..."
//   compute.gpu_ordinal = r->ordinal.value_or(0);

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "device/device.h"
#include "device/hip_sdk.h"

namespace strata {

struct ResolvedDevice {
    std::optional<size_t> index;  // into the device list; nullopt: the CPU
    std::optional<int> ordinal;   // the runtime's number for devices[*index], within the visible set
    GpuVendor vendor = GpuVendor::unknown;
    std::string explanation;      // one line for stderr, "strata: using ..."
};

// `flag` is what --device accepts:
//   cpu                  the CPU
//   auto (or empty)      the usable discrete GPU with the most memory; the CPU when none is usable
//   gpu                  the same GPU, but fails (listing every device and its reasons) when none is
//   pci:0000:03:00.0     a PCI bus id; GPU-... a UUID (or a unique prefix); 1, cuda:1, hip:1 a
//                        runtime ordinal; anything else a unique fragment of a name (select.h)
// Fails, listing the devices that exist, when the flag names no device, several, a device this
// build cannot use (with the reasons), or one no runtime has numbered.
Result<ResolvedDevice> resolve_device_flag(const std::vector<GpuDevice>& devices, std::string_view flag,
                                           const VisibilityVariables& user);

// The visibility variables the user set that decide `vendor`'s ordinals, as "NAME=value" items
// ("CUDA_VISIBLE_DEVICES=2,3"); empty when none applies. HIP reads CUDA_VISIBLE_DEVICES only when
// HIP_VISIBLE_DEVICES is unset.
std::vector<std::string> visibility_in_effect(GpuVendor vendor, const VisibilityVariables& user);

// `--gpus` (a model split over several GPUs): `all` — every usable discrete GPU with a runtime
// ordinal (every usable GPU when none is discrete), in ordinal order — or a comma-separated list
// of what --device accepts for one GPU (ordinal, pci:BUS-ID, UUID, name fragment), kept in the
// order given: the first GPU takes the first layers. A GPU may be listed twice (two shares of
// one card: how a one-GPU machine tests the split). Fails when an item names no usable GPU, or
// the GPUs need two runtimes (one process talks to CUDA or to HIP).
Result<std::vector<ResolvedDevice>> resolve_gpus_flag(const std::vector<GpuDevice>& devices, std::string_view flag,
                                                      const VisibilityVariables& user);

// This machine's GPUs as --device and --gpus see them: every runtime asked, the archs compiled
// into this binary, the visibility variables the runtimes will read (the caller's environment).
struct MachineDevices {
    std::vector<GpuDevice> devices;
    VisibilityVariables visibility;
};
MachineDevices list_this_machine(const VisibilityVariables& visibility, const HipSdkEnvironment& hip_sdk);

}  // namespace strata
