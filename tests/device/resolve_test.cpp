// `--device` resolution (device/resolve.h): which runtime ordinal a model is loaded on, the line
// Strata prints about it, and the errors — on the sysfs machines of issue 7 and on fake NVIDIA
// listings as the CUDA driver and NVML report them.
#include <gtest/gtest.h>

#include "device/enumerate.h"
#include "device/merge.h"
#include "device/resolve.h"
#include "device/sysfs_fixtures.h"
#include "support/scratch.h"

namespace strata {
namespace {

using test::FakeSysfs;

VisibilityVariables visible(const char* cuda, const char* hip, const char* rocr) {
    VisibilityVariables v;
    if (cuda) v.cuda_visible_devices = cuda;
    if (hip) v.hip_visible_devices = hip;
    if (rocr) v.rocr_visible_devices = rocr;
    return v;
}

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

// The Ryzen desktop: iGPU (gfx1036) at KFD node 1 = HIP 0, RX 9070 XT (gfx1201) at node 2 = HIP 1.
std::vector<GpuDevice> desktop(const std::string& root, const VisibilityVariables& vis = {}, const char* archs = "all") {
    FakeSysfs fs(root);
    test::write_desktop_igpu_and_9070xt(fs);
    EnumerateOptions o;
    o.sysfs_root = root;
    o.probe_runtimes = false;
    o.visibility = vis;
    o.classify.archs = std::string_view(archs) == "all" ? ArchSet::all_buildable() : ArchSet::parse(archs);
    o.classify.archs_origin = "this build";
    return enumerate_devices(o).devices;
}

GpuDevice nvidia(const char* source, const char* pci, std::optional<int> ordinal, const char* name, uint64_t gib, const char* uuid) {
    GpuDevice d;
    d.vendor = GpuVendor::nvidia;
    d.sources = {source};
    d.pci = PciAddress::parse(pci);
    d.runtime_ordinal = ordinal;
    d.name = name;
    d.arch = "sm_90";
    d.kind = GpuKind::discrete;
    d.vram_total_bytes = gib << 30;
    d.uuid = uuid;
    d.has_compute_driver = true;
    return d;
}

// Two H200s where CUDA_VISIBLE_DEVICES=1 left only the card at bus 0x1b visible, as CUDA ordinal
// 0; NVML still lists both, and the other one is marked hidden (as enumerate_devices does).
std::vector<GpuDevice> two_h200_one_visible() {
    const char* uuid_a = "GPU-aaaaaaaa-1111-2222-3333-444444444444";
    const char* uuid_b = "GPU-bbbbbbbb-1111-2222-3333-444444444444";
    auto devices = merge_devices({nvidia("cuda", "0000:1b:00.0", 0, "NVIDIA H200", 140, uuid_b),
                                  nvidia("nvml", "00000000:0a:00.0", std::nullopt, "NVIDIA H200", 140, uuid_a),
                                  nvidia("nvml", "00000000:1b:00.0", std::nullopt, "NVIDIA H200", 140, uuid_b)});
    devices[0].hidden_by = "CUDA_VISIBLE_DEVICES=1";  // 0000:0a:00.0 sorts first
    classify_devices(devices, {ArchSet::parse("sm_90"), "this build"});
    return devices;
}

TEST(ResolveDevice, AutoTakesTheDiscreteCardAtHipOrdinalOneAndSaysWhy) {
    test::ScratchDir dir;
    auto devices = desktop(dir.root());
    auto r = resolve_device_flag(devices, "auto", {});
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->ordinal, 1);
    EXPECT_EQ(r->vendor, GpuVendor::amd);
    EXPECT_TRUE(contains(r->explanation, "strata: using HIP GPU 1 (pci 0000:03:00.0, ")) << r->explanation;
    EXPECT_TRUE(contains(r->explanation, "gfx1201): --device auto takes the usable discrete GPU with the most memory")) << r->explanation;
    EXPECT_TRUE(contains(r->explanation, "predicted from the KFD node order")) << r->explanation;
    EXPECT_EQ(r->explanation.find('\n'), std::string::npos);  // one line
}

TEST(ResolveDevice, EveryIdentityFormNamesTheSameCard) {
    test::ScratchDir dir;
    auto devices = desktop(dir.root());
    for (const char* flag : {"pci:0000:03:00.0", "0000:03:00.0", "03:00.0", "GPU-0000000000002222", "gpu-00000000000022", "1", "hip:1"}) {
        auto r = resolve_device_flag(devices, flag, {});
        ASSERT_TRUE(r) << flag << ": " << r.status().message();
        EXPECT_EQ(r->ordinal, 1) << flag;
        ASSERT_TRUE(r->index);
        EXPECT_EQ(devices[*r->index].pci->to_string(), "0000:03:00.0") << flag;
        EXPECT_TRUE(contains(r->explanation, std::string("named by --device ") + flag)) << r->explanation;
    }
}

TEST(ResolveDevice, UnknownIdentitiesListTheDevicesThatExist) {
    test::ScratchDir dir;
    auto devices = desktop(dir.root());
    for (const char* flag : {"pci:0000:99:00.0", "GPU-ffff", "5"}) {
        auto r = resolve_device_flag(devices, flag, {});
        ASSERT_FALSE(r) << flag;
        const std::string& m = r.status().message();
        EXPECT_TRUE(contains(m, "got no match")) << m;
        EXPECT_TRUE(contains(m, "0000:03:00.0 gfx1201")) << m;
        EXPECT_TRUE(contains(m, "0000:0e:00.0 gfx1036")) << m;
    }
    auto bad = resolve_device_flag(devices, "pci:03:00", {});
    ASSERT_FALSE(bad);
    EXPECT_TRUE(contains(bad.status().message(), "expected a PCI bus id like pci:0000:03:00.0")) << bad.status().message();
}

TEST(ResolveDevice, NamingTheIgpuIsRefusedWithItsReasons) {
    test::ScratchDir dir;
    auto devices = desktop(dir.root());
    auto r = resolve_device_flag(devices, "0", {});
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.status().message(), "cannot be used")) << r.status().message();
    EXPECT_TRUE(contains(r.status().message(), "too little memory")) << r.status().message();
}

TEST(ResolveDevice, UserVisibilityRenumbersAndIsExplained) {
    test::ScratchDir dir;
    VisibilityVariables vis = visible(nullptr, "1", nullptr);
    auto devices = desktop(dir.root(), vis);
    auto r = resolve_device_flag(devices, "0", vis);  // ordinals count within the visible set
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->ordinal, 0);
    EXPECT_EQ(devices[*r->index].pci->to_string(), "0000:03:00.0");
    EXPECT_TRUE(contains(r->explanation, "HIP_VISIBLE_DEVICES=1 set by you is respected, so ordinal 0 counts within")) << r->explanation;

    auto hidden = resolve_device_flag(devices, "pci:0000:0e:00.0", vis);
    ASSERT_FALSE(hidden);
    EXPECT_TRUE(contains(hidden.status().message(), "hidden by HIP_VISIBLE_DEVICES=1")) << hidden.status().message();
    EXPECT_TRUE(contains(hidden.status().message(), "note: HIP_VISIBLE_DEVICES=1 set by you")) << hidden.status().message();
}

TEST(ResolveDevice, CudaVisibleDevicesOnNvidia) {
    auto devices = two_h200_one_visible();
    VisibilityVariables vis = visible("1", nullptr, nullptr);
    auto r = resolve_device_flag(devices, "GPU-bbbbbbbb", vis);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->ordinal, 0);
    EXPECT_EQ(r->vendor, GpuVendor::nvidia);
    EXPECT_TRUE(contains(r->explanation, "strata: using CUDA GPU 0 (pci 0000:1b:00.0, NVIDIA H200, sm_90): named by --device GPU-bbbbbbbb"))
        << r->explanation;
    EXPECT_TRUE(contains(r->explanation, "CUDA_VISIBLE_DEVICES=1 set by you is respected")) << r->explanation;

    auto autos = resolve_device_flag(devices, "auto", vis);
    ASSERT_TRUE(autos);
    EXPECT_EQ(autos->ordinal, 0);
    EXPECT_EQ(devices[*autos->index].pci->to_string(), "0000:1b:00.0");

    auto hidden = resolve_device_flag(devices, "pci:0000:0a:00.0", vis);
    ASSERT_FALSE(hidden);
    EXPECT_TRUE(contains(hidden.status().message(), "hidden by CUDA_VISIBLE_DEVICES=1")) << hidden.status().message();
}

TEST(ResolveDevice, CpuAndNoUsableGpu) {
    test::ScratchDir dir;
    auto devices = desktop(dir.root(), {}, "");  // a CPU-only build sees the cards but can use none
    auto cpu = resolve_device_flag(devices, "cpu", {});
    ASSERT_TRUE(cpu);
    EXPECT_FALSE(cpu->index);
    EXPECT_EQ(cpu->explanation, "strata: using the CPU (--device cpu)");

    auto autos = resolve_device_flag(devices, "auto", {});
    ASSERT_TRUE(autos);
    EXPECT_FALSE(autos->index);
    EXPECT_TRUE(contains(autos->explanation, "strata: using the CPU: no GPU is usable (0000:03:00.0")) << autos->explanation;
    EXPECT_TRUE(contains(autos->explanation, "it has no GPU backend")) << autos->explanation;

    auto gpu = resolve_device_flag(devices, "gpu", {});
    ASSERT_FALSE(gpu);
    EXPECT_TRUE(contains(gpu.status().message(), "--device gpu: expected a usable GPU, got none")) << gpu.status().message();
    EXPECT_TRUE(contains(gpu.status().message(), "0000:03:00.0 gfx1201")) << gpu.status().message();

    auto none = resolve_device_flag({}, "auto", {});
    ASSERT_TRUE(none);
    EXPECT_EQ(none->explanation, "strata: using the CPU: no GPU found");
    auto named = resolve_device_flag({}, "pci:0000:03:00.0", {});
    ASSERT_FALSE(named);
    EXPECT_TRUE(contains(named.status().message(), "(no GPU found)")) << named.status().message();
}

TEST(ResolveDevice, AUsableCardNoRuntimeNumberedIsRefused) {
    // NVML answered but libcuda did not: the card is known, yet nothing can load on it by ordinal.
    auto devices = merge_devices({nvidia("nvml", "0000:1b:00.0", std::nullopt, "NVIDIA H200", 140, "GPU-cccc")});
    classify_devices(devices, {ArchSet::parse("sm_90"), "this build"});
    auto r = resolve_device_flag(devices, "pci:0000:1b:00.0", {});
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.status().message(), "has no runtime ordinal")) << r.status().message();
}

TEST(ResolveDevice, VisibilityInEffectFollowsHipPrecedence) {
    VisibilityVariables both = visible("0", "1", "2");
    EXPECT_EQ(visibility_in_effect(GpuVendor::amd, both), (std::vector<std::string>{"ROCR_VISIBLE_DEVICES=2", "HIP_VISIBLE_DEVICES=1"}));
    EXPECT_EQ(visibility_in_effect(GpuVendor::nvidia, both), (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0"}));
    EXPECT_EQ(visibility_in_effect(GpuVendor::amd, visible("0", nullptr, nullptr)), (std::vector<std::string>{"CUDA_VISIBLE_DEVICES=0"}));
    EXPECT_TRUE(visibility_in_effect(GpuVendor::amd, {}).empty());
}

// Two H200s both visible, CUDA ordinals 0 (bus 0a) and 1 (bus 1b).
std::vector<GpuDevice> two_h200() {
    auto devices = merge_devices({nvidia("cuda", "0000:0a:00.0", 0, "NVIDIA H200", 140, "GPU-aaaaaaaa-1111-2222-3333-444444444444"),
                                  nvidia("cuda", "0000:1b:00.0", 1, "NVIDIA H200", 140, "GPU-bbbbbbbb-1111-2222-3333-444444444444")});
    classify_devices(devices, {ArchSet::parse("sm_90"), "this build"});
    return devices;
}

std::vector<int> ordinals(const std::vector<ResolvedDevice>& list) {
    std::vector<int> out;
    for (const auto& r : list) out.push_back(r.ordinal.value_or(-1));
    return out;
}

TEST(ResolveGpus, AllListsEveryUsableDiscreteGpuInOrdinalOrder) {
    auto r = resolve_gpus_flag(two_h200(), "all", {});
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(ordinals(*r), (std::vector<int>{0, 1}));
    EXPECT_TRUE(contains(r->front().explanation, "listed by --gpus all")) << r->front().explanation;

    // The desktop's iGPU is not usable: `all` is the discrete card alone.
    test::ScratchDir dir;
    auto desk = resolve_gpus_flag(desktop(dir.root()), "all", {});
    ASSERT_TRUE(desk) << desk.status().message();
    EXPECT_EQ(ordinals(*desk), (std::vector<int>{1}));
}

TEST(ResolveGpus, ListsKeepTheirOrderAndMayRepeatACard) {
    const auto devices = two_h200();
    auto r = resolve_gpus_flag(devices, "1,pci:0000:0a:00.0", {});
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(ordinals(*r), (std::vector<int>{1, 0}));
    auto twice = resolve_gpus_flag(devices, "0,0", {});
    ASSERT_TRUE(twice) << twice.status().message();
    EXPECT_EQ(ordinals(*twice), (std::vector<int>{0, 0}));
    auto uuid = resolve_gpus_flag(devices, "GPU-bbbbbbbb,0", {});
    ASSERT_TRUE(uuid) << uuid.status().message();
    EXPECT_EQ(ordinals(*uuid), (std::vector<int>{1, 0}));
}

TEST(ResolveGpus, BadItemsAreNamed) {
    const auto devices = two_h200();
    for (const char* flag : {"0,cpu", "0,,1", "auto", ""}) {
        auto r = resolve_gpus_flag(devices, flag, {});
        ASSERT_FALSE(r) << flag;
        EXPECT_TRUE(contains(r.status().message(), "expected `all` or a comma-separated list")) << r.status().message();
    }
    auto unknown = resolve_gpus_flag(devices, "0,7", {});
    ASSERT_FALSE(unknown);
    EXPECT_TRUE(contains(unknown.status().message(), "--gpus 0,7")) << unknown.status().message();
    EXPECT_TRUE(contains(unknown.status().message(), "got no match")) << unknown.status().message();
    test::ScratchDir dir;
    auto none = resolve_gpus_flag({}, "all", {});
    ASSERT_FALSE(none);
    EXPECT_TRUE(contains(none.status().message(), "expected usable GPUs, got none")) << none.status().message();
}

}  // namespace
}  // namespace strata
