// Merging runtime and OS listings by bus id (never by position), classification reasons, and
// every `--device` form with its errors.
#include <gtest/gtest.h>

#include "device/merge.h"
#include "device/select.h"

namespace strata {
namespace {

GpuDevice nvidia(const char* source, const char* pci, std::optional<int> ordinal, const char* name, uint64_t gib) {
    GpuDevice d;
    d.vendor = GpuVendor::nvidia;
    d.sources = {source};
    d.pci = PciAddress::parse(pci);
    d.runtime_ordinal = ordinal;
    d.name = name;
    d.arch = "sm_89";
    d.kind = GpuKind::discrete;
    d.vram_total_bytes = gib << 30;
    d.has_compute_driver = true;
    return d;
}

// CUDA numbers fastest-first: the 4090 at bus 0x41 is CUDA 0, the 4060 at bus 0x01 is CUDA 1,
// while NVML lists by bus. Statistics must land on the card they were read from.
std::vector<GpuDevice> two_nvidia_cards() {
    GpuDevice cuda0 = nvidia("cuda", "0000:41:00.0", 0, "NVIDIA GeForce RTX 4090", 24);
    cuda0.uuid = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
    GpuDevice cuda1 = nvidia("cuda", "0000:01:00.0", 1, "NVIDIA GeForce RTX 4060", 8);
    cuda1.uuid = "GPU-bbbbbbbb-1111-2222-3333-444444444444";
    GpuDevice nvml0 = nvidia("nvml", "00000000:01:00.0", std::nullopt, "NVIDIA GeForce RTX 4060", 8);
    nvml0.stats.temperature_c = 40;
    GpuDevice nvml1 = nvidia("nvml", "00000000:41:00.0", std::nullopt, "NVIDIA GeForce RTX 4090", 24);
    nvml1.stats.temperature_c = 70;
    auto devices = merge_devices({cuda0, cuda1, nvml0, nvml1});
    classify_devices(devices, {ArchSet::parse("sm_89"), "this build"});
    return devices;
}

TEST(Merge, JoinsByBusIdNotPosition) {
    auto devices = two_nvidia_cards();
    ASSERT_EQ(devices.size(), 2u);
    EXPECT_EQ(devices[0].pci->to_string(), "0000:01:00.0");  // sorted by bus id
    EXPECT_EQ(devices[0].runtime_ordinal, 1);
    EXPECT_EQ(devices[0].stats.temperature_c, 40);
    EXPECT_EQ(devices[1].runtime_ordinal, 0);
    EXPECT_EQ(devices[1].stats.temperature_c, 70);
    EXPECT_EQ((std::vector<std::string>{"cuda", "nvml"}), devices[1].sources);
}

TEST(Merge, EarlierRecordsWinAndLaterOnesFillGaps) {
    GpuDevice hip;
    hip.vendor = GpuVendor::amd;
    hip.sources = {"hip"};
    hip.pci = PciAddress::parse("0000:03:00.0");
    hip.name = "AMD Radeon RX 9070 XT";
    hip.runtime_ordinal = 1;
    hip.has_compute_driver = true;
    GpuDevice kfd;
    kfd.vendor = GpuVendor::amd;
    kfd.sources = {"kfd"};
    kfd.pci = hip.pci;
    kfd.arch = "gfx1201";
    kfd.wave_size = 32;
    kfd.runtime_ordinal = 0;  // a stale prediction must not override what HIP said
    kfd.ordinal_predicted = true;
    auto devices = merge_devices({hip, kfd});
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_EQ(devices[0].name, "AMD Radeon RX 9070 XT");
    EXPECT_EQ(devices[0].arch, "gfx1201");
    EXPECT_EQ(devices[0].runtime_ordinal, 1);
    EXPECT_FALSE(devices[0].ordinal_predicted);
}

TEST(Classify, GivesEveryReason) {
    GpuDevice d = nvidia("cuda", "0000:01:00.0", 0, "NVIDIA GeForce GT 1030", 2);
    d.arch = "sm_61";
    std::vector<GpuDevice> devices{d};
    classify_devices(devices, {ArchSet::parse("sm_80;sm_90"), "this build"});
    EXPECT_FALSE(devices[0].usable);
    ASSERT_EQ(devices[0].reasons.size(), 2u);
    EXPECT_EQ(devices[0].reasons[0], "arch sm_61 is not compiled into this build (sm_80, sm_90)");
    EXPECT_EQ(devices[0].reasons[1], "too little memory: 2.0 GiB < 4.0 GiB needed");
}

TEST(Select, EveryFormNamesTheRightCard) {
    auto devices = two_nvidia_cards();
    auto pick = [&](const char* spec) -> std::string {
        auto c = select_device(devices, spec);
        if (!c) return "error: " + c.status().message();
        return c->index ? devices[*c->index].name : "cpu";
    };
    EXPECT_EQ(pick("auto"), "NVIDIA GeForce RTX 4090");
    EXPECT_EQ(pick("cpu"), "cpu");
    EXPECT_EQ(pick("pci:0000:01:00.0"), "NVIDIA GeForce RTX 4060");
    EXPECT_EQ(pick("01:00.0"), "NVIDIA GeForce RTX 4060");
    EXPECT_EQ(pick("0"), "NVIDIA GeForce RTX 4090");  // CUDA ordinal 0, whatever the bus order
    EXPECT_EQ(pick("cuda:1"), "NVIDIA GeForce RTX 4060");
    EXPECT_EQ(pick("GPU-bbbbbbbb"), "NVIDIA GeForce RTX 4060");
    EXPECT_EQ(pick("4090"), "NVIDIA GeForce RTX 4090");  // no ordinal 4090: a name fragment
    EXPECT_EQ(pick("rtx 4060"), "NVIDIA GeForce RTX 4060");
}

TEST(Select, ErrorsNameTheCandidatesAndTheFix) {
    auto devices = two_nvidia_cards();
    auto ambiguous = select_device(devices, "geforce");
    ASSERT_FALSE(ambiguous);
    EXPECT_NE(ambiguous.status().message().find("got 2 matching this name fragment"), std::string::npos);
    EXPECT_NE(ambiguous.status().message().find("0000:41:00.0"), std::string::npos);
    auto absent = select_device(devices, "pci:0000:99:00.0");
    ASSERT_FALSE(absent);
    EXPECT_NE(absent.status().message().find("got no match"), std::string::npos);
    EXPECT_FALSE(select_device(devices, "hip:0"));
    EXPECT_FALSE(select_device(devices, "pci:nonsense"));
}

TEST(Select, BareOrdinalPresentInTwoRuntimesIsAmbiguous) {
    auto devices = two_nvidia_cards();
    GpuDevice amd;
    amd.vendor = GpuVendor::amd;
    amd.pci = PciAddress::parse("0000:03:00.0");
    amd.runtime_ordinal = 0;
    amd.name = "AMD Radeon RX 9070 XT";
    amd.arch = "gfx1201";
    amd.kind = GpuKind::discrete;
    amd.vram_total_bytes = 16ull << 30;
    amd.has_compute_driver = true;
    devices.push_back(amd);
    classify_devices(devices, {ArchSet::parse("sm_89;gfx1201"), "this build"});
    auto c = select_device(devices, "0");
    ASSERT_FALSE(c);
    EXPECT_NE(c.status().message().find("write cuda:0 or hip:0"), std::string::npos);
    auto hip = select_device(devices, "hip:0");
    ASSERT_TRUE(hip && hip->index);
    EXPECT_EQ(devices[*hip->index].name, "AMD Radeon RX 9070 XT");
}

TEST(Select, AnUnusableChoiceIsRefusedWithItsReasons) {
    auto devices = two_nvidia_cards();
    classify_devices(devices, {ArchSet::parse(""), "this build"});
    auto c = select_device(devices, "cuda:0");
    ASSERT_FALSE(c);
    EXPECT_NE(c.status().message().find("it has no GPU backend"), std::string::npos) << c.status().message();
    auto automatic = select_device(devices, "auto");
    ASSERT_TRUE(automatic);
    EXPECT_FALSE(automatic->index);  // the CPU, not an error
}

TEST(Visibility, StrataSetsItsOwnOnlyWhenTheUserDidNot) {
    auto devices = two_nvidia_cards();
    VisibilitySetting v = visibility_setting_for(devices[1], {});
    EXPECT_EQ(v.variable, "CUDA_VISIBLE_DEVICES");
    EXPECT_EQ(v.value, "GPU-aaaaaaaa-1111-2222-3333-444444444444");
    VisibilitySetting kept = visibility_setting_for(devices[1], {std::string("1"), std::nullopt, std::nullopt});
    EXPECT_TRUE(kept.variable.empty());
    EXPECT_NE(kept.note.find("set by you"), std::string::npos);
}

}  // namespace
}  // namespace strata
