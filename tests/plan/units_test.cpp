// Size flags (--vram 24GiB) and /proc/meminfo: what users type must parse exactly or fail clearly.
#include <gtest/gtest.h>

#include "plan/host_ram.h"
#include "plan/units.h"

namespace strata {
namespace {

uint64_t parsed(const char* text) {
    auto r = parse_byte_size(text);
    EXPECT_TRUE(r) << text << ": " << r.status().message();
    return r ? *r : 0;
}

TEST(ParseByteSize, BinaryUnitsAndPlainBytes) {
    EXPECT_EQ(parsed("0"), 0u);
    EXPECT_EQ(parsed("512"), 512u);
    EXPECT_EQ(parsed("512B"), 512u);
    EXPECT_EQ(parsed("1K"), 1024u);
    EXPECT_EQ(parsed("1KiB"), 1024u);
    EXPECT_EQ(parsed("512MiB"), 512u << 20);
    EXPECT_EQ(parsed("512m"), 512u << 20);  // units are case-insensitive
    EXPECT_EQ(parsed("24GiB"), 24ull << 30);
    EXPECT_EQ(parsed("10G"), 10ull << 30);  // a bare G is binary, as card and RAM sizes are meant
    EXPECT_EQ(parsed("2TiB"), 2ull << 40);
}

TEST(ParseByteSize, DecimalUnits) {
    EXPECT_EQ(parsed("1kb"), 1000u);
    EXPECT_EQ(parsed("10GB"), 10'000'000'000ull);
    EXPECT_EQ(parsed("3MB"), 3'000'000u);
    EXPECT_EQ(parsed("1TB"), 1'000'000'000'000ull);
}

TEST(ParseByteSize, FractionsAreExact) {
    EXPECT_EQ(parsed("1.5GiB"), 3ull << 29);       // 1610612736
    EXPECT_EQ(parsed("0.5MiB"), 512u << 10);
    EXPECT_EQ(parsed("0.25K"), 256u);
    EXPECT_EQ(parsed("2.5GB"), 2'500'000'000ull);
    EXPECT_EQ(parsed("1.0000000001G"), 1ull << 30);  // fraction digits past the ninth are ignored
    EXPECT_EQ(parsed("0.3K"), 307u);                // 307.2 bytes round down
}

TEST(ParseByteSize, RejectsAnythingElseWithTheInputInTheMessage) {
    for (const char* bad : {"", "GiB", "-1G", "+1G", "1.5.2G", "1 GiB", " 1G", "1G ", "12XB", "1.G", ".5G", "1e9",
                            "0x10", "1GiBs", "1iB"}) {
        auto r = parse_byte_size(bad);
        EXPECT_FALSE(r) << "accepted \"" << bad << "\"";
        if (!r) {
            EXPECT_NE(r.status().message().find("expected a number"), std::string::npos) << r.status().message();
            EXPECT_NE(r.status().message().find(std::string("\"") + bad + "\""), std::string::npos)
                << r.status().message();
        }
    }
}

TEST(ParseByteSize, RejectsOverflow) {
    EXPECT_EQ(parsed("18446744073709551615"), UINT64_MAX);
    EXPECT_FALSE(parse_byte_size("18446744073709551616"));
    EXPECT_FALSE(parse_byte_size("16777216TiB"));  // 2^24 · 2^40 = 2^64
    EXPECT_EQ(parsed("16777215TiB"), 16777215ull << 40);
}

TEST(FormatBytes, BinaryUnitsTwoDecimals) {
    EXPECT_EQ(format_bytes(0), "0 B");
    EXPECT_EQ(format_bytes(1023), "1023 B");
    EXPECT_EQ(format_bytes(1536), "1.50 KiB");
    EXPECT_EQ(format_bytes(512ull << 20), "512.00 MiB");
    EXPECT_EQ(format_bytes(19463254016ull), "18.13 GiB");  // synth-qwen3-30b-a3b (docs/BENCHMARKS.md)
}

TEST(Meminfo, ReadsMemAvailableInKiB) {
    const char* text =
        "MemTotal:       131900000 kB\n"
        "MemFree:         2000000 kB\n"
        "MemAvailable:   100000000 kB\n"
        "Buffers:          123456 kB\n";
    auto r = parse_meminfo_available(text);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(*r, 100000000ull * 1024);
}

TEST(Meminfo, MissingOrMalformedLineAsksForRam) {
    auto missing = parse_meminfo_available("MemTotal: 1 kB\nMemFree: 1 kB\n");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.status().message().find("--ram"), std::string::npos);
    EXPECT_FALSE(parse_meminfo_available("MemAvailable: lots\n"));
    EXPECT_FALSE(parse_meminfo_available("MemAvailable: 12 MB\n"));
    EXPECT_FALSE(parse_meminfo_available("XMemAvailable: 12 kB\n"));  // a key must start its line
}

TEST(Meminfo, ThisMachineHasSomeRam) {
    auto r = host_available_ram();
#ifdef __linux__
    ASSERT_TRUE(r) << r.status().message();  // /proc files report size 0: a sized read gets nothing
#else
    if (!r) GTEST_SKIP() << r.status().message();
#endif
    EXPECT_GT(*r, 16ull << 20);
}

}  // namespace
}  // namespace strata
