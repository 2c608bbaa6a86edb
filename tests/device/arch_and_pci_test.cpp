// PCI bus ids, KFD target versions, the product-name table and the compiled-arch check: the
// small facts the device listing and `--device` rely on.
#include <gtest/gtest.h>

#include "device/gpu_arch.h"
#include "device/pci_address.h"

namespace strata {
namespace {

TEST(PciAddress, ParsesKernelNvmlAndShortForms) {
    auto kernel = PciAddress::parse("0000:03:00.0");
    auto nvml = PciAddress::parse("00000000:03:00.0");
    auto shortform = PciAddress::parse("03:00.0\n");
    ASSERT_TRUE(kernel && nvml && shortform);
    EXPECT_EQ(*kernel, *nvml);
    EXPECT_EQ(*kernel, *shortform);
    EXPECT_EQ(kernel->to_string(), "0000:03:00.0");
    auto upper = PciAddress::parse("0001:C1:1F.7");
    ASSERT_TRUE(upper);
    EXPECT_EQ(upper->to_string(), "0001:c1:1f.7");
}

TEST(PciAddress, RejectsWhatIsNotABusId) {
    for (const char* bad : {"", "3", "0000:03:00", "0000:03:20.0", "0000:03:00.8", "gpu-1234", "0000:300:00.0", "9070"})
        EXPECT_FALSE(PciAddress::parse(bad)) << bad;
}

TEST(PciAddress, DecodesKfdLocationId) {
    // location_id = bus << 8 | device << 3 | function.
    EXPECT_EQ(PciAddress::from_kfd_location(0, 768).to_string(), "0000:03:00.0");
    EXPECT_EQ(PciAddress::from_kfd_location(1, (0xc1 << 8) | (2 << 3) | 1).to_string(), "0001:c1:02.1");
}

TEST(GpuArch, DecodesKfdTargetVersionWithHexStepping) {
    EXPECT_EQ(gfx_arch_from_kfd_version(120001), "gfx1201");
    EXPECT_EQ(gfx_arch_from_kfd_version(100306), "gfx1036");
    EXPECT_EQ(gfx_arch_from_kfd_version(110501), "gfx1151");
    EXPECT_EQ(gfx_arch_from_kfd_version(90006), "gfx906");
    EXPECT_EQ(gfx_arch_from_kfd_version(90010), "gfx90a");
    EXPECT_EQ(gfx_arch_from_kfd_version(0), "");
}

TEST(GpuArch, KnowsWhichTargetsAreIntegratedAndTheirWaveSize) {
    ASSERT_NE(find_amd_arch("gfx1036"), nullptr);
    EXPECT_TRUE(find_amd_arch("gfx1036")->integrated_only);
    EXPECT_TRUE(find_amd_arch("gfx1151")->integrated_only);
    EXPECT_FALSE(find_amd_arch("gfx1201")->integrated_only);
    EXPECT_EQ(find_amd_arch("gfx906:sramecc+:xnack-")->wave_size, 64);
    EXPECT_EQ(find_amd_arch("gfx1100")->wave_size, 32);
    EXPECT_EQ(find_amd_arch("gfx9999"), nullptr);
}

TEST(GpuArch, ProductNamesMapToArchByWholeWords) {
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 9070 XT"), "gfx1201");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 9060 XT"), "gfx1200");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 7900 XTX"), "gfx1100");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 7800 XT"), "gfx1101");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 6700 XT"), "gfx1031");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 6800"), "gfx1030");
    EXPECT_EQ(amd_arch_from_product_name("AMD Instinct MI50"), "gfx906");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon Instinct MI60"), "gfx906");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon(TM) 8060S Graphics"), "gfx1151");
    // Generic and unknown names give no arch rather than a guess.
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon(TM) Graphics"), "");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 790"), "");
    EXPECT_EQ(amd_arch_from_product_name("AMD Radeon RX 96070"), "");
}

TEST(ArchSet, AmdNeedsTheExactTarget) {
    ArchSet built = ArchSet::parse("gfx1100;gfx1201");
    EXPECT_TRUE(built.contains("gfx1201"));
    EXPECT_TRUE(built.contains("gfx1100:xnack-"));
    EXPECT_FALSE(built.contains("gfx1200"));
    EXPECT_FALSE(built.contains("gfx1036"));
}

TEST(ArchSet, NvidiaCubinsRunOnLaterMinorsAndPtxOnLaterArchs) {
    ArchSet cubin = ArchSet::parse("sm_80,sm_90");
    EXPECT_TRUE(cubin.contains("sm_86"));   // same major, later minor
    EXPECT_TRUE(cubin.contains("sm_90"));
    EXPECT_FALSE(cubin.contains("sm_75"));
    EXPECT_FALSE(cubin.contains("sm_100"));  // a new major needs PTX
    ArchSet cmake = ArchSet::parse("80-real;90");
    EXPECT_TRUE(cmake.contains("sm_120"));   // "90" carries compute_90 PTX
    EXPECT_FALSE(ArchSet::parse("80-real").contains("sm_90"));
}

TEST(ArchSet, EmptyMeansNoGpuBackendAndAllMeansEverythingBuildable) {
    ArchSet none = ArchSet::parse("");
    EXPECT_TRUE(none.empty());
    EXPECT_FALSE(none.contains("sm_90"));
    EXPECT_EQ(none.to_string(), "none");
    ArchSet all = ArchSet::all_buildable();
    EXPECT_TRUE(all.contains("sm_90"));
    EXPECT_TRUE(all.contains("gfx1201"));
    EXPECT_TRUE(all.contains("gfx906"));
    EXPECT_FALSE(all.contains("sm_70"));     // older than nvcc 13 compiles for
    EXPECT_FALSE(all.contains("gfx1036"));   // an iGPU target Strata does not build
}

}  // namespace
}  // namespace strata
