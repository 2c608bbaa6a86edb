#pragma once
// PCI addresses (domain:bus:device.function), the identity by which one GPU is recognised across
// every listing: runtimes number devices in their own order (CUDA fastest-first, HIP after the
// iGPU), the OS in another, so positions never match but bus ids always do.
//
//   auto a = PciAddress::parse("0000:03:00.0");          // also "03:00.0", "00000000:03:00.0"
//   auto b = PciAddress::from_kfd_location(0, 768);        // KFD location_id = bus << 8 | devfn
//   if (a && b && *a == *b) fmt::print("{}\n", a->to_string());

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

struct PciAddress {
    uint32_t domain = 0;
    uint32_t bus = 0;       // 0..255
    uint32_t device = 0;    // 0..31
    uint32_t function = 0;  // 0..7

    // Accepts "DDDD:BB:DD.F", the 8-digit domain NVML and CUDA print, and "BB:DD.F" (domain 0).
    static std::optional<PciAddress> parse(std::string_view text);
    // KFD's location_id packs bus and devfn as bus << 8 | device << 3 | function.
    static PciAddress from_kfd_location(uint32_t domain, uint32_t location_id);

    std::string to_string() const;  // "0000:03:00.0", the form the kernel uses
    auto operator<=>(const PciAddress&) const = default;
};

}  // namespace strata
