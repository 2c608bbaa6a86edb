#pragma once
// `--device`: choosing one GPU from the merged, classified list by identity. Accepted forms:
//   auto              the usable discrete GPU with the most memory (pick_auto_device)
//   cpu               no GPU
//   pci:0000:03:00.0  a PCI bus id ("pci:" optional; "03:00.0" means domain 0)
//   GPU-5e3a...       a UUID or a unique prefix of one
//   1, cuda:1, hip:1  a runtime ordinal (a bare number must name one backend's device only)
//   "9070"            a fragment of the name, case-insensitive, matching exactly one device
//
//   auto choice = select_device(devices, "pci:0000:03:00.0");
//   if (!choice) return report_failure("run", choice.status().message());
//   if (choice->index) use(devices[*choice->index]);

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "device/device.h"

namespace strata {

struct DeviceChoice {
    std::optional<size_t> index;  // nullopt: the CPU
    std::string why;              // "pci:0000:03:00.0 names it", or the auto rule that chose it
};

// Fails with a message naming the candidates when the spec matches no device, several devices,
// or a device that cannot be used (with the reasons).
Result<DeviceChoice> select_device(const std::vector<GpuDevice>& devices, std::string_view spec);

// The visibility variable Strata sets for itself so the runtime sees only the chosen card
// ("HIP_VISIBLE_DEVICES" = "1"). Nothing when the user already set one: theirs is respected,
// and `note` says so.
struct VisibilitySetting {
    std::string variable, value;  // empty variable: set nothing
    std::string note;
};
VisibilitySetting visibility_setting_for(const GpuDevice& device, const VisibilityVariables& user);

// One line per device for messages: "0000:03:00.0 gfx1201 AMD Radeon RX 9070 XT (hip 1)".
std::string describe_device(const GpuDevice& d);

}  // namespace strata
