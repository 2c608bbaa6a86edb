// Live statistics from amdgpu's sysfs files (device/gpu_stats.h) on fake trees in the kernel's
// formats: units converted (m°C, µW, Hz), the power file of old and new kernels, absent files left
// absent rather than zero, and only amdgpu cards reported.
#include <gtest/gtest.h>

#include "device/gpu_stats.h"
#include "device/sysfs_fixtures.h"
#include "support/scratch.h"

namespace strata {
namespace {

using test::FakeSysfs;
using test::kGiB;

TEST(GpuStats, ReadsEveryAmdgpuCardWithUnitsConverted) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    auto samples = read_amdgpu_sysfs_stats(dir.root());
    ASSERT_EQ(samples.size(), 2u);  // card0 (iGPU) and card1, in card order
    EXPECT_EQ(samples[0].pci_text(), "0000:0e:00.0");
    const GpuStatsSample& s = samples[1];
    EXPECT_EQ(s.vendor, GpuVendor::amd);
    EXPECT_EQ(s.source, "amdgpu");
    EXPECT_EQ(s.pci_text(), "0000:03:00.0");
    EXPECT_EQ(s.vram_total_bytes, 16304 * (1ull << 20));
    EXPECT_EQ(s.stats.vram_used_bytes, 700ull << 20);
    EXPECT_EQ(s.stats.utilization_percent, 3.0);
    EXPECT_EQ(s.stats.temperature_c, 45.0);   // 45000 m°C
    EXPECT_EQ(s.stats.power_w, 25.0);         // 25000000 µW
    EXPECT_EQ(s.stats.clock_mhz, 2520.0);     // 2520000000 Hz
    EXPECT_EQ(s.stats.pcie_generation, 4);    // 16.0 GT/s
    EXPECT_EQ(s.stats.pcie_width, 16);
}

TEST(GpuStats, NewerKernelsPowerInputAndMissingFilesStayAbsent) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    // A card as a newer kernel shows it without the optional files: power1_input only, no
    // gpu_busy_percent, no clock, no link files.
    const std::string dev = "sys/class/drm/card0/device/";
    fs.write(dev + "vendor", "0x1002\n");
    fs.write(dev + "device", "0x7550\n");
    fs.write(dev + "uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n");
    fs.write(dev + "mem_info_vram_total", std::to_string(16 * kGiB) + "\n");
    fs.write(dev + "mem_info_vram_used", "1073741824\n");
    fs.write(dev + "hwmon/hwmon4/temp1_input", "61500\n");
    fs.write(dev + "hwmon/hwmon4/power1_input", "212000000\n");
    auto samples = read_amdgpu_sysfs_stats(dir.root());
    ASSERT_EQ(samples.size(), 1u);
    const GpuStats& st = samples[0].stats;
    EXPECT_EQ(samples[0].vram_total_bytes, 16 * kGiB);
    EXPECT_EQ(st.vram_used_bytes, kGiB);
    EXPECT_EQ(st.temperature_c, 61.5);
    EXPECT_EQ(st.power_w, 212.0);
    EXPECT_FALSE(st.utilization_percent);
    EXPECT_FALSE(st.clock_mhz);
    EXPECT_FALSE(st.pcie_generation);
    EXPECT_FALSE(st.pcie_width);
}

TEST(GpuStats, OnlyAmdgpuCardsAndNothingOnAnEmptyTree) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    const std::string dev = "sys/class/drm/card0/device/";
    fs.write(dev + "vendor", "0x10de\n");
    fs.write(dev + "device", "0x2204\n");
    fs.write(dev + "uevent", "DRIVER=nouveau\nPCI_SLOT_NAME=0000:01:00.0\n");
    fs.write("sys/class/drm/card1/device/vendor", "0x1002\n");  // an AMD card with no driver bound
    fs.write("sys/class/drm/card1/device/uevent", "PCI_SLOT_NAME=0000:02:00.0\n");
    EXPECT_TRUE(read_amdgpu_sysfs_stats(dir.root()).empty());
    test::ScratchDir empty;
    EXPECT_TRUE(read_amdgpu_sysfs_stats(empty.root()).empty());
}

TEST(GpuStats, ReaderWithoutNvmlSamplesTheSysfsTreeEachTime) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    GpuStatsReader reader({.sysfs_root = dir.root(), .use_nvml = false});
    EXPECT_EQ(reader.nvml_status(), "NVML: not used");
    auto first = reader.sample();
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[1].stats.vram_used_bytes, 700ull << 20);
    // Statistics are live: a later sample sees the file's new value.
    fs.write("sys/class/drm/card1/device/mem_info_vram_used", std::to_string(9 * kGiB) + "\n");
    EXPECT_EQ(reader.sample()[1].stats.vram_used_bytes, 9 * kGiB);
}

}  // namespace
}  // namespace strata
