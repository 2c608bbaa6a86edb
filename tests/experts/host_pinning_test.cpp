// Page-locking the experts' home within what the OS allows (experts/host_pinning.h), against a
// recorded driver: Windows' WDDM refuses a registration that takes the locked total past its limit
// (about half of RAM), and every runtime refuses to lock a page twice.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experts/host_pinning.h"

namespace strata {
namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;

class RecordedDriver final : public HostPinner {
public:
    explicit RecordedDriver(uint64_t lockable) : lockable_(lockable) {}
    bool pin(const HostRange& r, std::string* error) override {
        asked.push_back(r);
        for (const HostRange& p : pinned) {
            if (r.begin < p.begin + p.bytes && p.begin < r.begin + r.bytes) {
                *error = "part or all of the requested memory range is already mapped";
                return false;
            }
        }
        if (locked_ + r.bytes > lockable_) {
            *error = "out of memory";
            return false;
        }
        locked_ += r.bytes;
        pinned.push_back(r);
        return true;
    }
    std::vector<HostRange> asked, pinned;

private:
    uint64_t lockable_, locked_ = 0;
};

// n layers of `bytes` each, back to back from 1 GiB, with `gap` bytes between them (attention).
std::vector<HostRange> layers(int n, uint64_t bytes, uint64_t gap = 0) {
    std::vector<HostRange> out;
    uintptr_t at = kGiB;
    for (int i = 0; i < n; ++i, at += bytes + gap) out.push_back({at, bytes});
    return out;
}

TEST(HostPinning, TheWholeSpanInOneRegistrationWhenItFits) {
    RecordedDriver driver(64 * kGiB);
    const PinOutcome o = pin_expert_ranges(layers(4, kGiB, 4096), UINT64_MAX, driver);
    EXPECT_EQ(o.kind, PinOutcome::Kind::Whole);
    EXPECT_TRUE(o.all_pinned());
    ASSERT_EQ(driver.asked.size(), 1u);
    EXPECT_EQ(driver.asked[0].begin, kGiB);
    EXPECT_EQ(driver.asked[0].bytes, 4 * kGiB + 3 * 4096);  // the gaps between layers too
    EXPECT_EQ(o.pinned_bytes, 4 * kGiB + 3 * 4096);
    EXPECT_EQ(o.note, "4.00 GiB of the mapped file page-locked");
}

TEST(HostPinning, PastTheOsLimitLayersAreLockedUntilTheLimit) {
    // A 32 GiB machine under WDDM: 16 GiB lockable; 48 layers of 0.5 GiB experts = 24 GiB.
    RecordedDriver driver(16 * kGiB);
    const PinOutcome o = pin_expert_ranges(layers(48, kGiB / 2), 16 * kGiB, driver);
    EXPECT_EQ(o.kind, PinOutcome::Kind::PerLayer);
    EXPECT_EQ(o.layers_pinned, 32u);
    EXPECT_EQ(o.layers_total, 48u);
    EXPECT_EQ(o.pinned_bytes, 16 * kGiB);
    EXPECT_FALSE(o.all_pinned());
    EXPECT_EQ(driver.asked.size(), 32u);  // the whole span was never asked for: it is over the limit
    EXPECT_EQ(o.note,
              "32 of 48 layers' experts page-locked (16.00 of 24.00 GiB), the rest staged by the driver: the experts' "
              "24.00 GiB exceed what the OS locks (16.00 GiB); layer 32 would pass the limit (the OS locks at most "
              "16.00 GiB)");
}

TEST(HostPinning, ARefusedWholeRegistrationFallsBackToLayers) {
    // Under the stated limit, but the driver's own is lower: the whole fails, then layers go in
    // until the driver refuses one; the next layers are not asked for.
    RecordedDriver driver(kGiB * 5 / 2);
    const PinOutcome o = pin_expert_ranges(layers(4, kGiB), UINT64_MAX, driver);
    EXPECT_EQ(o.kind, PinOutcome::Kind::PerLayer);
    EXPECT_EQ(o.layers_pinned, 2u);
    ASSERT_EQ(driver.asked.size(), 4u);  // the whole, layers 0 and 1, layer 2 refused
    EXPECT_EQ(driver.asked[0].bytes, 4 * kGiB);
    EXPECT_EQ(o.note,
              "2 of 4 layers' experts page-locked (2.00 of 4.00 GiB), the rest staged by the driver: locking their "
              "4.00 GiB at once failed (out of memory); the driver refused layer 2 (out of memory)");
}

TEST(HostPinning, EveryLayerLockedOneByOneSaysWhy) {
    // The driver refuses the 4 GiB at once but takes each layer (its limit counts one call).
    class OneGiBAtATime final : public HostPinner {
    public:
        bool pin(const HostRange& r, std::string* error) override {
            if (r.bytes <= kGiB) return true;
            *error = "invalid argument";
            return false;
        }
    } driver;
    const PinOutcome o = pin_expert_ranges(layers(4, kGiB), 8 * kGiB, driver);
    EXPECT_EQ(o.kind, PinOutcome::Kind::PerLayer);
    EXPECT_TRUE(o.all_pinned());
    EXPECT_EQ(o.note, "4.00 GiB of expert tensors page-locked layer by layer (4 layers): locking their 4.00 GiB at once failed (invalid argument)");
}

TEST(HostPinning, NeighbouringLayersSharingAPageLockItOnce) {
    // Layer 1 starts in the page where layer 0 ends (the GGUF aligns tensors to 32 bytes only);
    // attention weights lie between layers 1 and 2.
    std::vector<HostRange> ranges = {page_aligned_range(0x10000, 0x12010), page_aligned_range(0x12010, 0x14000),
                                     page_aligned_range(0x16000, 0x16800)};
    EXPECT_EQ(ranges[0].begin, 0x10000u);
    EXPECT_EQ(ranges[0].bytes, 0x3000u);
    EXPECT_EQ(ranges[1].begin, 0x12000u);
    RecordedDriver driver(UINT64_MAX);
    const PinOutcome o = pin_expert_ranges(ranges, 0x5000, driver);  // the whole (0x7000) is over the limit
    EXPECT_EQ(o.kind, PinOutcome::Kind::PerLayer);
    EXPECT_TRUE(o.all_pinned()) << o.note;
    ASSERT_EQ(driver.pinned.size(), 3u);
    EXPECT_EQ(driver.pinned[1].begin, 0x13000u);  // after layer 0's last page
    EXPECT_EQ(driver.pinned[1].bytes, 0x1000u);
    EXPECT_EQ(o.pinned_bytes, 0x5000u);
}

TEST(HostPinning, ALayerInsideTheLastPagesNeedsNoLock) {
    std::vector<HostRange> ranges = {page_aligned_range(0x10000, 0x12010), page_aligned_range(0x12010, 0x12020)};
    RecordedDriver driver(UINT64_MAX);
    const PinOutcome o = pin_expert_ranges(ranges, 0x1000, driver);  // even the first layer is over
    EXPECT_EQ(o.kind, PinOutcome::Kind::None);
    EXPECT_EQ(o.layers_pinned, 0u);
    EXPECT_TRUE(driver.asked.empty());
    const PinOutcome all = pin_expert_ranges(ranges, 0x3000, driver);
    EXPECT_EQ(all.kind, PinOutcome::Kind::Whole);
}

TEST(HostPinning, NothingToLock) {
    RecordedDriver driver(kGiB);
    const PinOutcome o = pin_expert_ranges({}, UINT64_MAX, driver);
    EXPECT_EQ(o.kind, PinOutcome::Kind::None);
    EXPECT_FALSE(o.all_pinned());
    EXPECT_TRUE(driver.asked.empty());
}

}  // namespace
}  // namespace strata
