#pragma once
// AMD GPUs on Windows, where there is no sysfs: the HIP SDK's `hipInfo` listing and the display
// adapters' registry values. The parsers are pure functions over text so they are tested on
// Linux; only read_windows_amd_devices() touches Windows (and returns nothing elsewhere).
//
//   auto devices = parse_hipinfo_output(text);    // one entry per "device#" block
//   auto adapters = parse_reg_query_output(text); // `reg query <display class key> /s`

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/device.h"
#include "device/hip_sdk.h"

namespace strata {

struct HipInfoDevice {
    int ordinal = -1;  // "device#" — the HIP ordinal, iGPU included
    std::string name;
    std::string arch;  // gcnArchName without feature flags
    uint64_t total_global_mem_bytes = 0;
    int warp_size = 0;
    int compute_units = 0;
    std::optional<PciAddress> pci;  // from pciDomainID/pciBusID/pciDeviceID (printed in decimal)
    std::optional<bool> integrated;  // "isIntegrated", printed by newer hipInfo only
};

// One display adapter's values under the display class key
// HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}\NNNN.
struct DisplayAdapterValues {
    std::string key;                 // "...\0001"
    std::string driver_desc;         // "AMD Radeon RX 9070 XT"
    std::string matching_device_id;  // "pci\ven_1002&dev_7550&rev_c0"
    // HardwareInformation.qwMemorySize: the full VRAM size. WMI's AdapterRAM and the 32-bit
    // HardwareInformation.MemorySize stop at 4 GB, so they are only a fallback.
    std::optional<uint64_t> qw_memory_size;
    std::optional<uint64_t> memory_size;
    std::optional<PciAddress> pci;  // when a LocationInformation value was available
};

std::vector<HipInfoDevice> parse_hipinfo_output(std::string_view text);
std::vector<DisplayAdapterValues> parse_reg_query_output(std::string_view text);
// "PCI bus 3, device 0, function 0" (Device Manager's location) -> 0000:03:00.0.
std::optional<PciAddress> parse_windows_location(std::string_view text);

GpuDevice device_from_hipinfo(const HipInfoDevice& h);
// Vendor and device ids from MatchingDeviceId, arch from the DriverDesc product name.
GpuDevice device_from_display_adapter(const DisplayAdapterValues& a);

// Windows only: the registry's display adapters and, when a hipInfo.exe runs (each SDK's bin in
// order, then PATH: hipinfo_candidates()), its listing. Elsewhere returns an empty list.
std::vector<GpuDevice> read_windows_amd_devices(const std::vector<HipSdk>& sdks);

}  // namespace strata
