// AMD on Windows: hipInfo listings (iGPU first) and the display adapters' registry values, as
// text in the formats hipInfo.cpp and `reg query /s` print, then merged and chosen from.
#include <gtest/gtest.h>

#include "device/merge.h"
#include "device/select.h"
#include "device/windows_amd.h"

namespace strata {
namespace {

// hipInfo pads each label to 34 columns ("device#" has no colon); trimmed to the fields used
// and a few neighbours. The iGPU is device#0: the RX 9070 XT is device#1.
constexpr const char* kHipInfoIgpuFirst = R"(
--------------------------------------------------------------------------------
device#                           0
Name:                             AMD Radeon(TM) Graphics
pciBusID:                         16
pciDeviceID:                      0
pciDomainID:                      0
multiProcessorCount:              1
maxThreadsPerMultiProcessor:      2048
totalGlobalMem:                   0.50 GB
warpSize:                         32
isIntegrated:                     1
gcnArchName:                      gfx1036
peers:
non-peers:                        device#0 device#1

memInfo.total:                    0.50 GB
memInfo.free:                     0.42 GB (84%)
--------------------------------------------------------------------------------
device#                           1
Name:                             AMD Radeon RX 9070 XT
pciBusID:                         3
pciDeviceID:                      0
pciDomainID:                      0
multiProcessorCount:              32
maxThreadsPerMultiProcessor:      2048
clockRate:                        2970 Mhz
totalGlobalMem:                   15.92 GB
warpSize:                         32
isIntegrated:                     0
gcnArchName:                      gfx1201
peers:
non-peers:                        device#0 device#1

memInfo.total:                    15.92 GB
memInfo.free:                     15.71 GB (99%)
)";

// `reg query "HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-e325-11ce-bfc1-08002be10318}" /s`
constexpr const char* kRegQuery =
    "\r\nHKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}\r\n"
    "    Class    REG_SZ    Display\r\n\r\n"
    "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}\\0000\r\n"
    "    DriverDesc    REG_SZ    AMD Radeon(TM) Graphics\r\n"
    "    MatchingDeviceId    REG_SZ    pci\\ven_1002&dev_164e\r\n"
    "    HardwareInformation.qwMemorySize    REG_QWORD    0x20000000\r\n"
    "    HardwareInformation.MemorySize    REG_BINARY    00000020\r\n\r\n"
    "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}\\0000\\Settings\r\n"
    "    DriverDesc    REG_SZ    not an adapter\r\n\r\n"
    "HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}\\0001\r\n"
    "    DriverDesc    REG_SZ    AMD Radeon RX 9070 XT\r\n"
    "    MatchingDeviceId    REG_SZ    PCI\\VEN_1002&DEV_7550&REV_C0\r\n"
    "    HardwareInformation.qwMemorySize    REG_QWORD    0x3fc000000\r\n"
    "    HardwareInformation.MemorySize    REG_DWORD    0xffffffff\r\n";

TEST(HipInfo, ParsesEachDeviceBlockOnItsOwn) {
    auto devs = parse_hipinfo_output(kHipInfoIgpuFirst);
    ASSERT_EQ(devs.size(), 2u);
    EXPECT_EQ(devs[0].ordinal, 0);
    EXPECT_EQ(devs[0].name, "AMD Radeon(TM) Graphics");
    EXPECT_EQ(devs[0].arch, "gfx1036");
    EXPECT_EQ(devs[0].integrated, true);
    ASSERT_TRUE(devs[0].pci);
    EXPECT_EQ(devs[0].pci->to_string(), "0000:10:00.0");  // pciBusID is printed in decimal
    EXPECT_EQ(devs[1].ordinal, 1);
    EXPECT_EQ(devs[1].name, "AMD Radeon RX 9070 XT");
    EXPECT_EQ(devs[1].arch, "gfx1201");
    EXPECT_EQ(devs[1].warp_size, 32);
    EXPECT_EQ(devs[1].compute_units, 32);
    EXPECT_NEAR(static_cast<double>(devs[1].total_global_mem_bytes), 15.92 * (1ull << 30), 1 << 20);
    EXPECT_EQ(devs[1].pci->to_string(), "0000:03:00.0");
}

TEST(HipInfo, OlderOutputWithFeatureFlagsAndNoIsIntegrated) {
    auto devs = parse_hipinfo_output(
        "device#                           0\nName:                             AMD Instinct MI50\n"
        "pciBusID:                         35\npciDeviceID:                      0\npciDomainID:                      0\n"
        "totalGlobalMem:                   31.98 GB\nwarpSize:                         64\n"
        "gcnArchName:                      gfx906:sramecc+:xnack-\n");
    ASSERT_EQ(devs.size(), 1u);
    EXPECT_EQ(devs[0].arch, "gfx906");
    EXPECT_FALSE(devs[0].integrated.has_value());
    GpuDevice d = device_from_hipinfo(devs[0]);
    EXPECT_EQ(d.kind, GpuKind::discrete);  // from the arch table
    EXPECT_EQ(d.wave_size, 64);
    EXPECT_EQ(d.pci->to_string(), "0000:23:00.0");
}

TEST(Registry, ParsesAdapterKeysAndFullMemorySize) {
    auto adapters = parse_reg_query_output(kRegQuery);
    ASSERT_EQ(adapters.size(), 2u);  // the class key and \0000\Settings are not adapters
    EXPECT_EQ(adapters[0].driver_desc, "AMD Radeon(TM) Graphics");
    EXPECT_EQ(adapters[0].qw_memory_size, 512ull << 20);
    EXPECT_EQ(adapters[0].memory_size, 512ull << 20);  // REG_BINARY, little-endian
    EXPECT_EQ(adapters[1].qw_memory_size, 0x3fc000000ull);  // beyond the 4 GB of MemorySize
    GpuDevice card = device_from_display_adapter(adapters[1]);
    EXPECT_EQ(card.vendor, GpuVendor::amd);
    EXPECT_EQ(card.pci_device_id, 0x7550);
    EXPECT_EQ(card.arch, "gfx1201");
    EXPECT_EQ(card.vram_total_bytes, 0x3fc000000ull);
    EXPECT_EQ(card.kind, GpuKind::discrete);
    EXPECT_FALSE(card.has_compute_driver);
}

TEST(Registry, ParsesDeviceManagerLocation) {
    auto a = parse_windows_location("PCI bus 3, device 0, function 0");
    ASSERT_TRUE(a);
    EXPECT_EQ(a->to_string(), "0000:03:00.0");
    EXPECT_FALSE(parse_windows_location("PCI Slot 1"));
}

std::vector<GpuDevice> windows_records(bool registry_has_location) {
    std::vector<GpuDevice> records;
    for (const auto& h : parse_hipinfo_output(kHipInfoIgpuFirst)) records.push_back(device_from_hipinfo(h));
    auto adapters = parse_reg_query_output(kRegQuery);
    if (registry_has_location) {
        adapters[0].pci = parse_windows_location("PCI bus 16, device 0, function 0");
        adapters[1].pci = parse_windows_location("PCI bus 3, device 0, function 0");
    }
    for (const auto& a : adapters) records.push_back(device_from_display_adapter(a));
    return records;
}

TEST(WindowsMerge, ByBusIdTheIgpuFirstOrderStillPicksHipOrdinalOne) {
    auto devices = merge_devices(windows_records(true));
    ASSERT_EQ(devices.size(), 2u);
    classify_devices(devices, {ArchSet::parse("gfx1201"), "this build"});
    auto choice = select_device(devices, "auto");
    ASSERT_TRUE(choice && choice->index);
    const GpuDevice& d = devices[*choice->index];
    EXPECT_EQ(d.runtime_ordinal, 1);
    EXPECT_EQ(d.name, "AMD Radeon RX 9070 XT");
    EXPECT_EQ((std::vector<std::string>{"hipinfo", "registry"}), d.sources);
}

TEST(WindowsMerge, WithoutBusIdsTheRegistryJoinsByArchOnlyWhenItKnowsOne) {
    auto devices = merge_devices(windows_records(false));
    // The RX 9070 XT's registry entry has an arch (from its name) and joins hipInfo's device#1;
    // "AMD Radeon(TM) Graphics" names no arch, so it is not guessed onto the iGPU.
    ASSERT_EQ(devices.size(), 3u);
    int joined = 0;
    for (const auto& d : devices) {
        if (d.sources.size() == 2) {
            ++joined;
            EXPECT_EQ(d.arch, "gfx1201");
            EXPECT_EQ(d.runtime_ordinal, 1);
        }
    }
    EXPECT_EQ(joined, 1);
}

TEST(WindowsMerge, TwoCardsOfOneArchAreNotJoinedByArch) {
    std::vector<GpuDevice> records;
    for (int i = 0; i < 2; ++i) {
        HipInfoDevice h;
        h.ordinal = i;
        h.name = "AMD Radeon RX 7900 XTX";
        h.arch = "gfx1100";
        h.pci = PciAddress{0, static_cast<uint32_t>(3 + i * 0x40), 0, 0};
        records.push_back(device_from_hipinfo(h));
    }
    DisplayAdapterValues a;
    a.driver_desc = "AMD Radeon RX 7900 XTX";
    a.matching_device_id = "PCI\\VEN_1002&DEV_744C";
    records.push_back(device_from_display_adapter(a));
    auto devices = merge_devices(records);
    EXPECT_EQ(devices.size(), 3u);  // ambiguous: the registry entry stays on its own
}

}  // namespace
}  // namespace strata
