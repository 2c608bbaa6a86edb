// The verdicts of `strata devices --selftest` (device/selftest.h), on a fake runtime whose "device
// memory" is host memory and whose faults are switched on one at a time: a healthy card passes,
// and each fault fails exactly the check that exists to catch it.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "device/selftest.h"

namespace strata {
namespace {

class FakeMemoryApi final : public GpuMemoryApi {
public:
    uint64_t total = uint64_t{8} << 30;
    bool grant_everything = false;  // fault: a driver that never refuses
    bool misalign = false;          // fault: allocations 16 bytes off the 256-byte boundary
    bool flip_a_bit = false;        // fault: device->host copies corrupt one bit
    bool garbage_when_fresh = false;

    std::string description() const override { return "fake runtime"; }
    Result<GpuMemoryInfo> memory_info() override { return GpuMemoryInfo{total - used_, total}; }

    Result<uint64_t> allocate(size_t bytes) override {
        if (!grant_everything && used_ + bytes > total) return Status::error("out of memory");
        next_ += 4096 + (bytes + 4095) / 4096 * 4096;
        uint64_t address = next_ + (misalign ? 16 : 0);
        // A granted impossible request is recorded but never backed by real memory.
        buffers_[address] = std::vector<uint8_t>(bytes > total ? 0 : bytes, garbage_when_fresh ? 0xff : 0);
        used_ += bytes > total ? 0 : bytes;
        return address;
    }
    void release(uint64_t address) override {
        auto it = buffers_.find(address);
        ASSERT_NE(it, buffers_.end()) << "released an address never allocated";
        used_ -= it->second.size();
        buffers_.erase(it);
    }
    Result<void*> allocate_pinned(size_t bytes) override {
        pinned_.emplace_back(bytes);
        ++pinned_live;
        return static_cast<void*>(pinned_.back().data());
    }
    void release_pinned(void*) override { --pinned_live; }

    Status copy_to_device(uint64_t device, const void* host, size_t bytes) override {
        std::memcpy(buffers_.at(device).data(), host, bytes);
        return Status::ok();
    }
    Status copy_to_host(void* host, uint64_t device, size_t bytes) override {
        std::memcpy(host, buffers_.at(device).data(), bytes);
        if (flip_a_bit && bytes > 1000) static_cast<uint8_t*>(host)[1000] ^= 0x10;
        return Status::ok();
    }

    size_t live_buffers() const { return buffers_.size(); }
    int pinned_live = 0;

private:
    std::map<uint64_t, std::vector<uint8_t>> buffers_;
    std::vector<std::vector<uint8_t>> pinned_;
    uint64_t used_ = 0, next_ = 1 << 20;
};

const SelftestOptions kSmall{.copy_bytes = 1 << 20, .repeats = 2};

const SelftestCheck& check(const SelftestReport& r, const std::string& name) {
    for (const auto& c : r.checks) {
        if (c.name == name) return c;
    }
    ADD_FAILURE() << "no check named " << name;
    static SelftestCheck none;
    return none;
}

std::vector<std::string> failed(const SelftestReport& r) {
    std::vector<std::string> names;
    for (const auto& c : r.checks) {
        if (!c.passed) names.push_back(c.name);
    }
    return names;
}

TEST(Selftest, AHealthyCardPassesEveryCheckAndFreesWhatItAllocated) {
    FakeMemoryApi api;
    SelftestReport r = run_memory_selftest(api, kSmall);
    EXPECT_TRUE(r.passed()) << testing::PrintToString(failed(r));
    EXPECT_EQ(r.checks.size(), 6u);
    EXPECT_EQ(check(r, "memory").detail, "8.0 GiB total, 8.0 GiB free");
    EXPECT_NE(check(r, "pinned round trip").detail.find("1 MiB: host->device "), std::string::npos) << check(r, "pinned round trip").detail;
    EXPECT_NE(check(r, "pageable round trip").detail.find("bytes identical"), std::string::npos);
    EXPECT_NE(check(r, "over-allocation").detail.find("12.0 GiB refused (out of memory)"), std::string::npos) << check(r, "over-allocation").detail;
    EXPECT_EQ(check(r, "fresh memory").detail, "1 MiB fresh allocation reads as zeros");
    EXPECT_EQ(api.live_buffers(), 0u);
    EXPECT_EQ(api.pinned_live, 0);
}

TEST(Selftest, ACorruptedCopyFailsTheRoundTripsAndSaysWhere) {
    FakeMemoryApi api;
    api.flip_a_bit = true;
    SelftestReport r = run_memory_selftest(api, kSmall);
    EXPECT_EQ(failed(r), (std::vector<std::string>{"pageable round trip", "pinned round trip"}));
    EXPECT_NE(check(r, "pinned round trip").detail.find("1 of 1048576 bytes came back different, the first at offset 1000"), std::string::npos)
        << check(r, "pinned round trip").detail;
}

TEST(Selftest, ADriverThatGrantsTheImpossibleFailsOverAllocation) {
    FakeMemoryApi api;
    api.grant_everything = true;
    SelftestReport r = run_memory_selftest(api, kSmall);
    EXPECT_EQ(failed(r), (std::vector<std::string>{"over-allocation"}));
    EXPECT_NE(check(r, "over-allocation").detail.find("expected it refused"), std::string::npos);
    EXPECT_EQ(api.live_buffers(), 0u);
}

TEST(Selftest, MisalignedAllocationsFailAlignment) {
    FakeMemoryApi api;
    api.misalign = true;
    SelftestReport r = run_memory_selftest(api, kSmall);
    EXPECT_EQ(failed(r), (std::vector<std::string>{"alignment"}));
    EXPECT_NE(check(r, "alignment").detail.find("expected a multiple of 256"), std::string::npos);
}

TEST(Selftest, GarbageInFreshMemoryIsReportedAsNanNotAFailure) {
    FakeMemoryApi api;
    api.garbage_when_fresh = true;  // 0xffffffff is a NaN as f32
    SelftestReport r = run_memory_selftest(api, kSmall);
    EXPECT_TRUE(r.passed());
    EXPECT_EQ(check(r, "fresh memory").detail,
              "1 MiB fresh allocation holds 1048576 nonzero bytes, 262144 NaN/Inf as f32 (never read before writing)");
}

TEST(Selftest, FormatsBytesAndRates) {
    EXPECT_EQ(selftest_size_text(256ull << 20), "256 MiB");
    EXPECT_EQ(selftest_size_text(3ull << 29), "1.5 GiB");
    EXPECT_EQ(selftest_size_text(100), "100 B");
    EXPECT_EQ(selftest_rate_text(25'000'000'000ull, 1.0), "25.0 GB/s");
    EXPECT_EQ(selftest_rate_text(1, 0.0), "too fast to time");
}

}  // namespace
}  // namespace strata
