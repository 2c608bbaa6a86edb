// Strata's own visibility variable (device/self_visibility.h): what it sets for the card(s) it
// chose on NVIDIA and AMD machines, when it sets nothing (the user's variable, a card without a
// PCI bus id), and the marker a re-run process reads back. The exec itself is the cli's
// (cli/self_rerun.h) and runs only where a GPU is chosen.
#include <gtest/gtest.h>

#include "device/merge.h"
#include "device/resolve.h"
#include "device/self_visibility.h"

namespace strata {
namespace {

GpuDevice card(GpuVendor vendor, const char* pci, int ordinal, const char* uuid) {
    GpuDevice d;
    d.vendor = vendor;
    d.sources = {vendor == GpuVendor::nvidia ? "cuda" : "hip"};
    d.pci = PciAddress::parse(pci);
    d.runtime_ordinal = ordinal;
    d.name = "card";
    d.arch = vendor == GpuVendor::nvidia ? "sm_90" : "gfx1100";
    d.kind = GpuKind::discrete;
    d.vram_total_bytes = uint64_t(24) << 30;
    d.uuid = uuid;
    d.has_compute_driver = true;
    d.usable = true;
    return d;
}

ResolvedDevice chosen(const std::vector<GpuDevice>& devices, size_t index) {
    ResolvedDevice r;
    r.index = index;
    r.ordinal = devices[index].runtime_ordinal;
    r.vendor = devices[index].vendor;
    return r;
}

TEST(SelfVisibility, NvidiaCardsAreNamedByUuidInFlagOrder) {
    const std::vector<GpuDevice> d = {card(GpuVendor::nvidia, "0000:0a:00.0", 0, "GPU-aaaa"),
                                      card(GpuVendor::nvidia, "0000:1b:00.0", 1, "GPU-bbbb")};
    auto v = visibility_for_self(d, {chosen(d, 1), chosen(d, 0), chosen(d, 1)}, {});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->variable, "CUDA_VISIBLE_DEVICES");
    EXPECT_EQ(v->value, "GPU-bbbb,GPU-aaaa");  // one entry per card, first-seen order
    EXPECT_EQ(v->cards, (std::vector<std::string>{"pci:0000:1b:00.0", "pci:0000:0a:00.0", "pci:0000:1b:00.0"}));
    auto back = parse_self_visibility_marker(v->marker());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->variable, v->variable);
    EXPECT_EQ(back->value, v->value);
    EXPECT_EQ(back->cards, v->cards);

    // Without a UUID the runtime ordinal stands in.
    std::vector<GpuDevice> no_uuid = d;
    no_uuid[1].uuid.clear();
    EXPECT_EQ(visibility_for_self(no_uuid, {chosen(no_uuid, 1)}, {})->value, "1");
}

TEST(SelfVisibility, AmdCardsAreNamedByHipOrdinal) {
    // The desktop case: the iGPU is HIP 0, the discrete card HIP 1; Strata hides the iGPU.
    const std::vector<GpuDevice> d = {card(GpuVendor::amd, "0000:0e:00.0", 0, ""), card(GpuVendor::amd, "0000:03:00.0", 1, "")};
    auto v = visibility_for_self(d, {chosen(d, 1)}, {});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->variable, "HIP_VISIBLE_DEVICES");
    EXPECT_EQ(v->value, "1");
    EXPECT_EQ(v->cards, std::vector<std::string>{"pci:0000:03:00.0"});
}

TEST(SelfVisibility, TheUsersVariableIsLeftAlone) {
    const std::vector<GpuDevice> nv = {card(GpuVendor::nvidia, "0000:0a:00.0", 0, "GPU-aaaa")};
    VisibilityVariables user;
    user.cuda_visible_devices = "0";
    EXPECT_FALSE(visibility_for_self(nv, {chosen(nv, 0)}, user));
    const std::vector<GpuDevice> amd = {card(GpuVendor::amd, "0000:03:00.0", 0, "")};
    VisibilityVariables rocr;
    rocr.rocr_visible_devices = "1";
    EXPECT_FALSE(visibility_for_self(amd, {chosen(amd, 0)}, rocr));
    // A variable Strata set itself does not count as the user's (visibility_in_effect skips it)...
    VisibilityVariables own;
    own.cuda_visible_devices = "GPU-aaaa";
    own.set_by_strata = "CUDA_VISIBLE_DEVICES";
    EXPECT_TRUE(visibility_in_effect(GpuVendor::nvidia, own).empty());
}

TEST(SelfVisibility, NothingIsSetWithoutAPciBusIdOrACard) {
    std::vector<GpuDevice> d = {card(GpuVendor::nvidia, "0000:0a:00.0", 0, "GPU-aaaa")};
    d[0].pci.reset();
    EXPECT_FALSE(visibility_for_self(d, {chosen(d, 0)}, {}));
    EXPECT_FALSE(visibility_for_self(d, {}, {}));
    ResolvedDevice cpu;  // no index: the CPU
    EXPECT_FALSE(visibility_for_self(d, {cpu}, {}));
}

TEST(SelfVisibility, MarkersStrataDidNotWriteAreIgnored) {
    for (const char* bad : {"", "CUDA_VISIBLE_DEVICES=0", "PATH=/bin;pci:0000:0a:00.0", "CUDA_VISIBLE_DEVICES=0;0",
                            "CUDA_VISIBLE_DEVICES=;pci:0000:0a:00.0", "CUDA_VISIBLE_DEVICES=0;"}) {
        EXPECT_FALSE(parse_self_visibility_marker(bad)) << bad;
    }
}

}  // namespace
}  // namespace strata
