// Structural facts of the IQ lookup tables (quant/iq_grids.h). The values were converted from
// ggml's source by a script; these checks catch a truncated or mistyped table — a short
// initializer list zero-fills silently, and a changed byte breaks the allowed-value set or the
// order — for entries that the reference vectors (quant_vectors_test.cpp) never look up.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <vector>

#include "quant/iq_grids.h"

namespace strata {
namespace {

// The magnitudes one grid byte may take, in increasing order: the position of a byte's value in
// this list is its digit in the code ggml's quantizer numbers the grid points by.
struct GridSpec {
    const char* name;
    std::vector<uint64_t> entries;
    int values_per_entry;
    std::vector<uint8_t> levels;
};

template <typename T, size_t N>
std::vector<uint64_t> widen(const T (&table)[N]) {
    return std::vector<uint64_t>(std::begin(table), std::end(table));
}

std::vector<GridSpec> grids() {
    const std::vector<uint8_t> iq2 = {0x08, 0x19, 0x2b};
    return {
        {"IQ1S", widen(kIq1sGrid), 8, {0xff, 0x00, 0x01}},  // −1, 0, +1 as int8
        {"IQ2XXS", widen(kIq2xxsGrid), 8, iq2},
        {"IQ2XS", widen(kIq2xsGrid), 8, iq2},
        {"IQ2S", widen(kIq2sGrid), 8, iq2},
        {"IQ3XXS", widen(kIq3xxsGrid), 4, {4, 12, 20, 28, 36, 44, 52, 62}},
        {"IQ3S", widen(kIq3sGrid), 4, {1, 3, 5, 7, 9, 11, 13, 15}},
    };
}

TEST(IqGrids, HaveTheSizesOfTheirIndexWidths) {
    EXPECT_EQ(std::size(kIq1sGrid), 2048u);   // 11-bit indices
    EXPECT_EQ(std::size(kIq2xxsGrid), 256u);  // 8-bit
    EXPECT_EQ(std::size(kIq2xsGrid), 512u);   // 9-bit
    EXPECT_EQ(std::size(kIq2sGrid), 1024u);   // 10-bit
    EXPECT_EQ(std::size(kIq3xxsGrid), 256u);  // 8-bit
    EXPECT_EQ(std::size(kIq3sGrid), 512u);    // 9-bit
}

TEST(IqGrids, EveryByteIsOneOfTheFormatsLevels) {
    for (const GridSpec& g : grids()) {
        for (size_t k = 0; k < g.entries.size(); ++k) {
            for (int j = 0; j < g.values_per_entry; ++j) {
                const uint8_t b = grid_byte(g.entries[k], j);
                EXPECT_NE(std::find(g.levels.begin(), g.levels.end(), b), g.levels.end())
                    << g.name << " entry " << k << " byte " << j << " = " << int(b);
            }
            if (g.values_per_entry == 4) {
                EXPECT_EQ(g.entries[k] >> 32, 0u) << g.name << " entry " << k;
            }
        }
    }
}

TEST(IqGrids, EntriesAreDistinct) {
    for (const GridSpec& g : grids()) {
        const std::set<uint64_t> unique(g.entries.begin(), g.entries.end());
        EXPECT_EQ(unique.size(), g.entries.size()) << g.name;
    }
}

// ggml's quantizer numbers a grid point by the digits of its magnitudes (value j is digit j, base
// 4 for the 2-bit and 1-bit grids, base 8 for the 3-bit ones) and the tables list the points in
// increasing order of that number; a mistyped entry almost always breaks the order.
TEST(IqGrids, EntriesAreInGgmlsIndexOrder) {
    for (const GridSpec& g : grids()) {
        const uint64_t base = g.levels.size() <= 4 ? 4 : 8;
        uint64_t previous = 0;
        for (size_t k = 0; k < g.entries.size(); ++k) {
            uint64_t code = 0;
            for (int j = g.values_per_entry - 1; j >= 0; --j) {
                const auto digit = std::find(g.levels.begin(), g.levels.end(), grid_byte(g.entries[k], j)) - g.levels.begin();
                code = code * base + static_cast<uint64_t>(digit);
            }
            if (k > 0) {
                EXPECT_GT(code, previous) << g.name << " entry " << k;
            }
            previous = code;
        }
    }
}

TEST(IqGrids, FirstIq2xxsPointsAreGgmls) {
    // The first points of ggml's kgrid_2bit_256 (ggml-quants.c), independent of ggml-common.h.
    const uint64_t codes[] = {0, 2, 5, 8, 10, 17, 20, 32, 34, 40, 42, 65, 68, 80, 88, 97};
    const std::vector<uint8_t> levels = {0x08, 0x19, 0x2b};
    for (size_t k = 0; k < std::size(codes); ++k) {
        uint64_t expected = 0;
        for (int j = 7; j >= 0; --j) expected = (expected << 8) | levels[(codes[k] >> (2 * j)) & 3];
        EXPECT_EQ(kIq2xxsGrid[k], expected) << "entry " << k;
    }
}

TEST(IqSignTable, AddsTheParityBitToSevenStoredSigns) {
    for (int s = 0; s < 128; ++s) {
        EXPECT_EQ(kIq2SignTable[s] & 127, s);
        EXPECT_EQ(std::popcount(static_cast<unsigned>(kIq2SignTable[s])) % 2, 0) << "entry " << s;
    }
}

TEST(Iq4nlValues, AreSixteenIncreasingLevelsSpanningInt8) {
    EXPECT_EQ(kIq4nlValues[0], -127);
    EXPECT_EQ(kIq4nlValues[15], 113);
    for (int k = 1; k < 16; ++k) EXPECT_LT(kIq4nlValues[k - 1], kIq4nlValues[k]) << "level " << k;
}

}  // namespace
}  // namespace strata
