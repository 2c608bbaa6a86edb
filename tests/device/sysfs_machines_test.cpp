// The machines of issue 7 as fake sysfs trees: for each, which GPU Strata picks, the HIP ordinal
// it will have, and the reasons given for the others. No runtime is asked (probe_runtimes off).
#include <gtest/gtest.h>

#include "device/enumerate.h"
#include "device/select.h"
#include "device/sysfs_linux.h"
#include "device/sysfs_fixtures.h"
#include "support/scratch.h"

namespace strata {
namespace {

using test::FakeAmdGpu;
using test::FakeSysfs;
using test::kGiB;

DeviceListing list(const std::string& root, const std::string& archs, VisibilityVariables vis = {}) {
    EnumerateOptions o;
    o.sysfs_root = root;
    o.probe_runtimes = false;
    o.visibility = std::move(vis);
    o.classify.archs = archs == "all" ? ArchSet::all_buildable() : ArchSet::parse(archs);
    o.classify.archs_origin = "this build";
    return enumerate_devices(o);
}

const GpuDevice& at(const DeviceListing& l, const char* pci) {
    for (const auto& d : l.devices) {
        if (d.pci && d.pci->to_string() == pci) return d;
    }
    ADD_FAILURE() << "no device at " << pci;
    static GpuDevice none;
    return none;
}

bool has_reason(const GpuDevice& d, const std::string& fragment) {
    for (const auto& r : d.reasons) {
        if (r.find(fragment) != std::string::npos) return true;
    }
    return false;
}

std::string auto_pci(const DeviceListing& l) {
    AutoPick p = pick_auto_device(l.devices);
    return p.index ? l.devices[*p.index].pci->to_string() : "cpu";
}

TEST(KfdTopology, ReadsGpuNodesInNodeOrderAndSkipsCpuNodes) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    auto nodes = read_kfd_gpu_nodes(dir.root());
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0].node_id, 1);
    EXPECT_EQ(nodes[0].arch, "gfx1036");
    EXPECT_EQ(nodes[0].pci.to_string(), "0000:0e:00.0");
    EXPECT_EQ(nodes[1].arch, "gfx1201");
    EXPECT_EQ(nodes[1].wave_front_size, 32);
    EXPECT_EQ(nodes[1].local_memory_bytes, 16304 * (1ull << 20));
    EXPECT_EQ(nodes[1].device_id, 0x7550);
}

TEST(DrmCards, ReadsIdentityMemoryAndStatsAndSkipsConnectors) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    auto cards = read_drm_cards(dir.root());
    ASSERT_EQ(cards.size(), 2u);  // card0-DP-1 and card1-DP-1 are connectors
    const DrmCard& dgpu = cards[1];
    EXPECT_EQ(dgpu.card, "card1");
    ASSERT_TRUE(dgpu.pci);
    EXPECT_EQ(dgpu.pci->to_string(), "0000:03:00.0");
    EXPECT_EQ(dgpu.driver, "amdgpu");
    EXPECT_EQ(dgpu.device_id, 0x7550);
    EXPECT_EQ(dgpu.stats.vram_used_bytes, 700ull << 20);
    EXPECT_EQ(dgpu.stats.temperature_c, 45.0);
    EXPECT_EQ(dgpu.stats.power_w, 25.0);
    EXPECT_EQ(dgpu.stats.pcie_generation, 4);
    EXPECT_EQ(dgpu.stats.pcie_width, 16);
}

TEST(PciIds, LooksUpTheDeviceUnderItsVendorOnly) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    fs.add_pci_ids();
    EXPECT_EQ(lookup_pci_ids_name(dir.root(), 0x1002, 0x7550), "Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]");
    EXPECT_EQ(lookup_pci_ids_name(dir.root(), 0x10de, 0x2204), "GA102 [GeForce RTX 3090]");
    EXPECT_EQ(lookup_pci_ids_name(dir.root(), 0x10de, 0x7550), "");
}

// The case this whole layer exists for: ordinal 0 is the iGPU, the card Strata must use is 1.
TEST(Machines, DesktopWithIgpuPicksThe9070XtAtHipOrdinalOne) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    DeviceListing l = list(dir.root(), "gfx1100;gfx1201");
    ASSERT_EQ(l.devices.size(), 2u);  // KFD, DRM and PCI records merged by bus id

    const GpuDevice& dgpu = at(l, "0000:03:00.0");
    EXPECT_EQ(dgpu.arch, "gfx1201");
    EXPECT_EQ(dgpu.kind, GpuKind::discrete);
    EXPECT_EQ(dgpu.runtime_ordinal, 1);
    EXPECT_TRUE(dgpu.ordinal_predicted);
    EXPECT_EQ(dgpu.name, "Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]");
    EXPECT_EQ(dgpu.compute_units, 64);
    EXPECT_TRUE(dgpu.usable) << testing::PrintToString(dgpu.reasons);

    const GpuDevice& igpu = at(l, "0000:0e:00.0");
    EXPECT_EQ(igpu.kind, GpuKind::integrated);
    EXPECT_EQ(igpu.runtime_ordinal, 0);
    EXPECT_FALSE(igpu.usable);
    EXPECT_TRUE(has_reason(igpu, "arch gfx1036 is not compiled into this build"));
    EXPECT_TRUE(has_reason(igpu, "too little memory: 0.5 GiB"));

    auto choice = select_device(l.devices, "auto");
    ASSERT_TRUE(choice);
    ASSERT_TRUE(choice->index);
    EXPECT_EQ(l.devices[*choice->index].pci->to_string(), "0000:03:00.0");
    EXPECT_NE(choice->why.find("discrete"), std::string::npos);
}

TEST(Machines, VisibilityVariablesRenumberAndHide) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    for (auto vis : {VisibilityVariables{std::nullopt, "1", std::nullopt}, VisibilityVariables{std::nullopt, std::nullopt, "1"},
                     VisibilityVariables{std::nullopt, std::nullopt, "GPU-0000000000002222"}}) {
        DeviceListing l = list(dir.root(), "gfx1201", vis);
        EXPECT_EQ(at(l, "0000:03:00.0").runtime_ordinal, 0);
        const GpuDevice& igpu = at(l, "0000:0e:00.0");
        EXPECT_FALSE(igpu.runtime_ordinal);
        EXPECT_TRUE(has_reason(igpu, "hidden by"));
        EXPECT_EQ(auto_pci(l), "0000:03:00.0");
    }
    // Hiding the only usable card leaves the CPU, and says why.
    DeviceListing l = list(dir.root(), "gfx1201", {std::nullopt, "0", std::nullopt});
    EXPECT_TRUE(has_reason(at(l, "0000:03:00.0"), "hidden by HIP_VISIBLE_DEVICES=0"));
    EXPECT_EQ(auto_pci(l), "cpu");
}

TEST(Machines, CpuOnlyBuildUsesNothingButForArchsAllAnswersForSetup) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    test::write_desktop_igpu_and_9070xt(fs);
    DeviceListing none = list(dir.root(), "");
    EXPECT_TRUE(has_reason(at(none, "0000:03:00.0"), "it has no GPU backend"));
    EXPECT_EQ(auto_pci(none), "cpu");
    DeviceListing all = list(dir.root(), "all");
    EXPECT_EQ(auto_pci(all), "0000:03:00.0");
    EXPECT_FALSE(at(all, "0000:0e:00.0").usable);  // gfx1036 is not a target Strata builds
}

TEST(Machines, TwoRx7900XtxPickTheLowerBusIdAndRefuseAnAmbiguousName) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    fs.add_cpu_node(0);
    for (int i = 0; i < 2; ++i) {
        fs.add_amd_gpu({.kfd_node = 1 + i, .gfx_target_version = 110000, .pci = i == 0 ? "0000:43:00.0" : "0000:03:00.0",
                        .device_id = 0x744c, .vram_bytes = 24 * kGiB, .simd_count = 192, .drm_card = i});
    }
    fs.add_pci_ids();
    DeviceListing l = list(dir.root(), "gfx1100");
    ASSERT_EQ(l.devices.size(), 2u);
    // KFD node 1 is the card at bus 0x43, so HIP numbers it 0 although its bus id sorts last.
    EXPECT_EQ(at(l, "0000:43:00.0").runtime_ordinal, 0);
    EXPECT_EQ(at(l, "0000:03:00.0").runtime_ordinal, 1);
    EXPECT_EQ(auto_pci(l), "0000:03:00.0");
    auto by_name = select_device(l.devices, "7900");
    ASSERT_FALSE(by_name);
    EXPECT_NE(by_name.status().message().find("got 2 matching"), std::string::npos) << by_name.status().message();
    auto by_pci = select_device(l.devices, "pci:0000:43:00.0");
    ASSERT_TRUE(by_pci);
    EXPECT_EQ(l.devices[*by_pci->index].runtime_ordinal, 0);
}

TEST(Machines, DualMi50AreWave64AndUsable) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    fs.add_cpu_node(0);
    fs.add_cpu_node(1);
    fs.add_amd_gpu({.kfd_node = 2, .gfx_target_version = 90006, .pci = "0000:23:00.0", .device_id = 0x66a1, .vram_bytes = 32 * kGiB,
                    .simd_count = 240, .simd_per_cu = 4, .wave_front_size = 64, .drm_card = 0});
    fs.add_amd_gpu({.kfd_node = 3, .gfx_target_version = 90006, .pci = "0000:26:00.0", .device_id = 0x66a1, .vram_bytes = 32 * kGiB,
                    .simd_count = 240, .simd_per_cu = 4, .wave_front_size = 64, .drm_card = 1});
    fs.add_pci_ids();
    DeviceListing l = list(dir.root(), "gfx906");
    ASSERT_EQ(l.devices.size(), 2u);
    for (const auto& d : l.devices) {
        EXPECT_EQ(d.arch, "gfx906");
        EXPECT_EQ(d.wave_size, 64);
        EXPECT_EQ(d.compute_units, 60);
        EXPECT_EQ(d.kind, GpuKind::discrete);
        EXPECT_TRUE(d.usable);
    }
    EXPECT_EQ(at(l, "0000:23:00.0").runtime_ordinal, 0);
    EXPECT_EQ(at(l, "0000:26:00.0").runtime_ordinal, 1);
    EXPECT_EQ(auto_pci(l), "0000:23:00.0");
}

TEST(Machines, StrixHaloApuIsIntegratedAndPickedWhenNothingElseIs) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    fs.add_cpu_node(0, 32);
    fs.add_amd_gpu({.kfd_node = 1, .gfx_target_version = 110501, .pci = "0000:c5:00.0", .device_id = 0x1586, .vram_bytes = 96 * kGiB,
                    .simd_count = 80, .drm_card = 0});
    fs.add_pci_ids();
    DeviceListing l = list(dir.root(), "gfx1151");
    ASSERT_EQ(l.devices.size(), 1u);
    const GpuDevice& apu = l.devices[0];
    EXPECT_EQ(apu.kind, GpuKind::integrated);
    EXPECT_TRUE(apu.usable);
    auto choice = select_device(l.devices, "auto");
    ASSERT_TRUE(choice && choice->index);
    EXPECT_NE(choice->why.find("no discrete GPU is usable"), std::string::npos);
}

TEST(Machines, NoAmdGpuListsNothingOrTheDriverlessCards) {
    test::ScratchDir empty;
    DeviceListing none = list(empty.root(), "all");
    EXPECT_TRUE(none.devices.empty());
    EXPECT_EQ(auto_pci(none), "cpu");

    // An NVIDIA card on nouveau, an AMD card with no driver bound, and a BMC's VGA chip.
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    fs.add_pci_ids();
    fs.add_pci_function("0000:01:00.0", 0x10de, 0x2204, 0x030000, "nouveau");
    fs.add_pci_function("0000:02:00.0", 0x1002, 0x7550, 0x030000, "");
    fs.add_pci_function("0000:05:00.0", 0x1a03, 0x2000, 0x030000, "ast");
    fs.add_pci_function("0000:06:00.0", 0x144d, 0xa80a, 0x010802, "nvme");
    DeviceListing l = list(dir.root(), "all");
    ASSERT_EQ(l.devices.size(), 2u);
    EXPECT_TRUE(has_reason(at(l, "0000:01:00.0"), "nouveau"));
    EXPECT_EQ(at(l, "0000:01:00.0").name, "GA102 [GeForce RTX 3090]");
    EXPECT_TRUE(has_reason(at(l, "0000:02:00.0"), "no kernel driver bound"));
    EXPECT_EQ(auto_pci(l), "cpu");
}

TEST(Machines, AmdgpuWithoutKfdNodeSaysTheComputeDriverIsMissing) {
    test::ScratchDir dir;
    FakeSysfs fs(dir.root());
    fs.add_amd_gpu({.kfd_node = -1, .pci = "0000:03:00.0", .device_id = 0x7550, .vram_bytes = 16 * kGiB, .drm_card = 0});
    DeviceListing l = list(dir.root(), "all");
    ASSERT_EQ(l.devices.size(), 1u);
    EXPECT_TRUE(has_reason(l.devices[0], "no compute (KFD) node"));
    EXPECT_EQ(l.devices[0].vram_total_bytes, 16 * kGiB);  // DRM still tells the memory
}

}  // namespace
}  // namespace strata
