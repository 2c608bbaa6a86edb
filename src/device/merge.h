#pragma once
// Folding the per-source records of one card into one GpuDevice, deciding whether this build can
// run on each, and which one `auto` picks.
//
//   std::vector<GpuDevice> devices = merge_devices(records);   // records in precedence order
//   classify_devices(devices, {ArchSet::parse(STRATA_GPU_ARCHS), "this build", 4ull << 30});
//   AutoPick pick = pick_auto_device(devices);                  // pick.index, pick.why

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "device/gpu_arch.h"

namespace strata {

// Records of the same card are recognised by PCI bus id, never by their position in a listing.
// A record without a bus id (a registry adapter) joins the one card of the same vendor whose arch
// equals its own, only when exactly one such card exists and it has no record from that source
// yet; otherwise it stays a device of its own. Earlier records win for every field they know,
// so callers pass runtimes first, then sysfs and registry listings. Sorted by bus id.
std::vector<GpuDevice> merge_devices(const std::vector<GpuDevice>& records);

struct ClassifyOptions {
    ArchSet archs;              // archs a device must have to be usable
    std::string archs_origin;   // "this build" or "--for-archs": named in the reasons
    uint64_t min_vram_bytes = uint64_t{4} << 30;  // below this the dense weights and KV do not fit
};

// Sets `usable` and `reasons` on every device. Never fails: a device this build cannot run is
// still listed, with the reasons why.
void classify_devices(std::vector<GpuDevice>& devices, const ClassifyOptions& options);

struct AutoPick {
    std::optional<size_t> index;  // nullopt: no usable GPU, run on the CPU
    std::string why;
};

// The usable discrete GPU with the most memory (ties: the lower bus id). Only when no discrete GPU
// is usable does an integrated one with enough memory (a Strix Halo APU) qualify.
AutoPick pick_auto_device(const std::vector<GpuDevice>& devices);

std::string format_gib(uint64_t bytes);  // "15.9 GiB"

}  // namespace strata
