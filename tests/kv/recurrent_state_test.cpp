// RecurrentState (kv/recurrent_state.h): host buffers start at zero and clear() zeroes them; a
// state kept by a backend (RecurrentStateStorage, the GPU model's VRAM buffers) is cleared with
// it, counted in bytes(), and makes the state non-empty, so sessions treat it as recurrent.
#include "kv/recurrent_state.h"

#include <gtest/gtest.h>

#include <cstring>
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
    void save(uint8_t* dst) const override { std::memset(dst, value, 1234); }
    void load(const uint8_t* src) override { value = src[0]; }
    uint8_t value = 0;  // stands for the backend's buffers

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

// A turn checkpoint: the state at one position comes back bit for bit, host buffers, histories,
// the backend's own buffers and the position, after the sequence went on past it.
TEST(RecurrentState, SnapshotRestoresEveryBufferAndThePosition) {
    int clears = 0;
    RecurrentState rs({true, false, true}, 6, 16);
    rs.add_history(1, 4, 3, 7);
    rs.conv(0)[3] = 1.5f, rs.ssm(2)[15] = -2.0f, rs.history(1)[2] = 0.25f, rs.history_tokens(1)[0] = 42;
    rs.advance(9);
    const RecurrentSnapshot at9 = rs.snapshot();
    EXPECT_EQ(at9.n_past, 9);
    EXPECT_EQ(at9.bytes.size(), rs.bytes());
    rs.conv(0)[3] = 3.0f, rs.ssm(2)[15] = 0.5f, rs.history(1)[2] = -1.0f, rs.history_tokens(1)[0] = 5;
    rs.advance(4);
    ASSERT_TRUE(rs.restore(at9).is_ok());
    EXPECT_EQ(rs.conv(0)[3], 1.5f);
    EXPECT_EQ(rs.ssm(2)[15], -2.0f);
    EXPECT_EQ(rs.history(1)[2], 0.25f);
    EXPECT_EQ(rs.history_tokens(1)[0], 42);
    EXPECT_EQ(rs.n_past(), 9);

    // A backend's storage copies its own buffers.
    RecurrentState dev(std::make_unique<CountingStorage>(&clears));
    auto* storage = static_cast<CountingStorage*>(dev.storage());
    storage->value = 9;
    const RecurrentSnapshot d = dev.snapshot();
    storage->value = 1;
    ASSERT_TRUE(dev.restore(d).is_ok());
    EXPECT_EQ(storage->value, 9);

    // Another shape is refused, with the sizes.
    Status wrong = rs.restore(d);
    ASSERT_FALSE(wrong.is_ok());
    EXPECT_NE(wrong.message().find("another model"), std::string::npos);
}

}  // namespace
}  // namespace strata
