// The split of a layer's missing experts between the CPU lane and the link (experts/miss_lanes.h),
// on hand-computed cases: forced lanes, the decode share and its feedback, the cost model of
// prompt-like steps, the periodic CPU check, and the coldest-first order.
#include "experts/miss_lanes.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata {
namespace {

// MissLanes::split on a list written in place (it sorts its argument); a copy of the result.
MissSplit split(MissLanes& lanes, std::vector<MissedExpert> misses, uint64_t expert_bytes, double backlog_s = 0) {
    return lanes.split(misses, expert_bytes, backlog_s);
}

std::vector<MissedExpert> decode_misses(int n) {  // one token each, heat = 10 × expert id
    std::vector<MissedExpert> m;
    for (int i = 0; i < n; ++i) m.push_back({i, 1, 10.0 * i});
    return m;
}

TEST(MissLanes, ForcedLanes) {
    MissLanes stream(MissLane::Stream);
    const MissSplit& s = split(stream, {{7, 1, 0}, {3, 40, 0}, {5, 1, 0}}, 1 << 20);
    EXPECT_TRUE(s.cpu.empty());
    EXPECT_EQ(s.streamed, (std::vector<int32_t>{3, 5, 7}));
    MissLanes cpu(MissLane::Cpu);
    for (int64_t tokens : {1, 40}) {
        const MissSplit& c = split(cpu, {{7, tokens, 0}, {3, tokens, 0}}, 1 << 20);
        EXPECT_EQ(c.cpu.size(), 2u) << tokens << " tokens";
        EXPECT_TRUE(c.streamed.empty());
        EXPECT_FALSE(c.decode_like);
    }
    // What the CPU lane is expected to take of a decode step's misses (what it reads ahead).
    EXPECT_EQ(stream.expected_decode_cpu_share(), 0.0);
    EXPECT_EQ(cpu.expected_decode_cpu_share(), 1.0);
    MissLanes lanes(MissLane::Auto);
    EXPECT_EQ(lanes.expected_decode_cpu_share(), lanes.decode_cpu_share());
}

// Decode-like steps: the share (0.5 at first) of the misses goes to the CPU, coldest first.
TEST(MissLanes, DecodeShareTakesTheColdest) {
    MissLanes lanes(MissLane::Auto);
    std::vector<MissedExpert> misses = decode_misses(8);
    misses[6].heat = -1.0;  // expert 6 is the coldest of all
    const MissSplit& s = split(lanes, misses, 1 << 20);
    EXPECT_TRUE(s.decode_like);
    EXPECT_EQ(s.cpu, (std::vector<int32_t>{6, 0, 1, 2}));
    EXPECT_EQ(s.streamed, (std::vector<int32_t>{3, 4, 5, 7}));
    EXPECT_EQ(s.predicted_cpu_s, 0.0);
}

// The share moves toward the lane that finished first (0.02 away from the CPU, three times that
// toward it), within [0, 1]; a prompt-like split leaves it alone.
TEST(MissLanes, DecodeFeedbackMovesTheShare) {
    MissLanes lanes(MissLane::Auto);
    split(lanes, decode_misses(8), 1 << 20);
    for (int i = 0; i < 40; ++i) lanes.decode_feedback(false);  // the GPU's part still ran: CPU takes more
    EXPECT_DOUBLE_EQ(lanes.decode_cpu_share(), 1.0);
    EXPECT_EQ(split(lanes, decode_misses(8), 1 << 20).cpu.size(), 8u);
    for (int i = 0; i < 10; ++i) lanes.decode_feedback(true);
    EXPECT_NEAR(lanes.decode_cpu_share(), 0.8, 1e-12);
    EXPECT_EQ(split(lanes, decode_misses(5), 1 << 20).cpu.size(), 4u);  // round(0.8 · 5)
    split(lanes, {{0, 3, 0}, {1, 9, 0}}, 1 << 20);                       // prompt-like
    lanes.decode_feedback(true);
    EXPECT_NEAR(lanes.decode_cpu_share(), 0.8, 1e-12);
}

// The share holds still where the GPU's part is done first three steps in four (the default
// bias), and drifts away from the CPU at one in two; a bias of 1 holds it at one in two.
TEST(MissLanes, DecodeShareSettlesWhereTheGpuIsFirstThreeTimesInFour) {
    auto run = [](MissLanes& lanes, int gpu_first_of_four) {
        split(lanes, decode_misses(8), 1 << 20);
        const double start = lanes.decode_cpu_share();  // 0.5
        for (int round = 0; round < 5; ++round)
            for (int i = 0; i < 4; ++i) lanes.decode_feedback(i < gpu_first_of_four);
        return lanes.decode_cpu_share() - start;
    };
    MissLanes biased(MissLane::Auto);
    EXPECT_NEAR(run(biased, 3), 0.0, 1e-9);
    MissLanes drifting(MissLane::Auto);
    EXPECT_NEAR(run(drifting, 2), 5 * (2 * 0.06 - 2 * 0.02), 1e-9);  // +0.4, towards the CPU: 0.9
    MissLanes even(MissLane::Auto);
    even.set_decode_share_bias(1.0);
    EXPECT_NEAR(run(even, 2), 0.0, 1e-9);
}

// Link 10 GB/s and 10 MB experts: 1 ms a copy. CPU 1.5 ms an expert + 0.1 ms a further token.
// Misses of 3, 5, 10 and 20 tokens: the 3-token one costs 1.7 ms against 3 ms of copies left →
// CPU; the 5-token one would make 3.6 ms against 2 ms → stays on the link, and so do the rest.
TEST(MissLanes, PromptStepsFollowTheCostModel) {
    MissLanes lanes(MissLane::Auto);
    lanes.set_link(10.0);
    lanes.set_cpu_costs(1.5e-3, 1e-4);
    const MissSplit& s = split(lanes, {{4, 20, 0}, {9, 5, 0}, {2, 3, 0}, {7, 10, 0}}, 10'000'000);
    EXPECT_FALSE(s.decode_like);
    EXPECT_EQ(s.cpu, (std::vector<int32_t>{2}));
    EXPECT_EQ(s.streamed, (std::vector<int32_t>{4, 7, 9}));
    EXPECT_NEAR(s.predicted_cpu_s, 1.7e-3, 1e-12);
    // That step took twice the prediction: the scale moves a tenth of the way, 1 → 1.1.
    lanes.cpu_feedback(3.4e-3);
    EXPECT_NEAR(lanes.cpu_scale(), 1.1, 1e-12);
}

// Copies queued before the step's own (a backlog of 2 ms on the link) give the CPU that much longer:
// of the misses above, the 5-token one (1.7 + 1.9 = 3.6 ms against 2 + 3 - 1 = 4 ms of copies) now
// goes to the CPU too, the 10-token one (3.6 + 2.4 = 6 ms against 2 + 2 - 1 = 3 ms) does not.
TEST(MissLanes, LinkBacklogLengthensTheCpuLane) {
    MissLanes lanes(MissLane::Auto);
    lanes.set_link(10.0);
    lanes.set_cpu_costs(1.5e-3, 1e-4);
    const MissSplit& s = split(lanes, {{4, 20, 0}, {9, 5, 0}, {2, 3, 0}, {7, 10, 0}}, 10'000'000, 2e-3);
    EXPECT_EQ(s.cpu, (std::vector<int32_t>{2, 9}));
    EXPECT_EQ(s.streamed, (std::vector<int32_t>{4, 7}));
    EXPECT_NEAR(s.predicted_cpu_s, 3.6e-3, 1e-12);
}

// A CPU the model judges too slow still gets one miss every 32 prompt-like steps.
TEST(MissLanes, PeriodicCpuCheck) {
    MissLanes lanes(MissLane::Auto);
    lanes.set_link(10.0);
    lanes.set_cpu_costs(1.0, 0.0);  // a second an expert: never worth it by the model
    for (int step = 1; step <= 2 * MissLanes::kStepsBetweenCpuChecks; ++step) {
        const MissSplit& s = split(lanes, {{1, 4, 0}, {2, 8, 0}}, 10'000'000);
        const bool check = step % MissLanes::kStepsBetweenCpuChecks == 0;
        EXPECT_EQ(s.cpu.size(), check ? 1u : 0u) << "step " << step;
        if (check) {
            EXPECT_EQ(s.cpu[0], 1);  // the fewest tokens
        }
    }
}

}  // namespace
}  // namespace strata
