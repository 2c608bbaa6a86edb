// RecurrentState (kv/recurrent_state.h): host buffers start at zero and clear() zeroes them; a
// state kept by a backend (RecurrentStateStorage, the GPU model's VRAM buffers) is cleared with
// it, counted in bytes(), and makes the state non-empty, so sessions treat it as recurrent.
#include "kv/recurrent_state.h"

#include <gtest/gtest.h>

#include <memory>

namespace strata {
namespace {

TEST(RecurrentState, HostBuffersStartAtZeroAndClearZeroesThem) {
    RecurrentState rs({true, false, true}, 6, 16);
    EXPECT_FALSE(rs.empty());
    EXPECT_TRUE(rs.has_layer(0));
    EXPECT_FALSE(rs.has_layer(1));
    EXPECT_EQ(rs.bytes(), 2u * (6 + 16) * sizeof(float));
    for (int i = 0; i < 16; ++i) EXPECT_EQ(rs.ssm(2)[i], 0.0f);
    rs.conv(0)[3] = 1.5f, rs.ssm(2)[15] = -2.0f;
    rs.advance(7);
    EXPECT_EQ(rs.n_past(), 7);
    rs.clear();
    EXPECT_EQ(rs.conv(0)[3], 0.0f);
    EXPECT_EQ(rs.ssm(2)[15], 0.0f);
    EXPECT_EQ(rs.n_past(), 0);
}

class CountingStorage final : public RecurrentStateStorage {
public:
    explicit CountingStorage(int* clears) : clears_(clears) {}
    void clear() override { ++*clears_; }
    uint64_t bytes() const override { return 1234; }

private:
    int* clears_;
};

TEST(RecurrentState, BackendStorageIsClearedCountedAndNotEmpty) {
    int clears = 0;
    RecurrentState rs(std::make_unique<CountingStorage>(&clears));
    EXPECT_FALSE(rs.empty());
    EXPECT_NE(rs.storage(), nullptr);
    EXPECT_EQ(rs.bytes(), 1234u);
    rs.advance(3);
    rs.clear();
    EXPECT_EQ(clears, 1);
    EXPECT_EQ(rs.n_past(), 0);
    RecurrentState moved = std::move(rs);  // sessions hold their state by value
    moved.clear();
    EXPECT_EQ(clears, 2);
    EXPECT_TRUE(RecurrentState().empty());
}

}  // namespace
}  // namespace strata
