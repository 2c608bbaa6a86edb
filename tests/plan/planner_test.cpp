// The memory planner's arithmetic against plans worked out by hand on the toy model
// (toy_model.h): dense in VRAM 34304, embedding 6400 on the host, 8 experts in slots of 3072.
// Requests use context 100 (KV 25600 in f16) and batch 8, whose workspaces are
// 61936 on the GPU (74224 with the expert copy buffers) and 14512 on the host beside a GPU
// (allocations_test.cpp derives them).
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/planner.h"
#include "plan/units.h"
#include "toy_model.h"

namespace strata {
namespace {

PlanRequest toy_request(uint64_t vram, uint64_t ram) {
    PlanRequest r;
    if (vram > 0) r.gpu = DeviceMemory{"toy GPU", vram, vram};
    r.vram_reserve = 4096;
    r.ram_bytes = ram;
    r.ram_reserve = 1000;
    r.n_ctx = 100;
    r.kv_type = KvCacheType::F16;
    r.n_batch = 8;
    return r;
}

Plan toy_plan(const PlanRequest& r, bool with_experts = true) {
    ModelInventory inv = test::toy_inventory(with_experts);
    auto w = summarize_weights(inv);
    EXPECT_TRUE(w) << w.status().message();
    return make_plan(inv, *w, r);
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(Planner, EverythingFitsKeepsAllExpertsResidentWithoutCopyBuffers) {
    Plan p = toy_plan(toy_request(1 << 20, 1 << 20));
    ASSERT_TRUE(p.fits);
    // 34304 dense + 25600 KV + 61936 workspace + 4096 reserve + 8 · 3072 experts = 150512 ≤ 1 MiB.
    EXPECT_EQ(p.vram_capacity, 1u << 20);
    EXPECT_EQ(p.vram_dense, 34304u);
    EXPECT_EQ(p.vram_context, 25600u);
    EXPECT_EQ(p.vram_workspace.total(), 61936u);
    EXPECT_EQ(p.vram_workspace.expert_staging, 0u);
    EXPECT_EQ(p.vram_expert_slots, 8u);
    EXPECT_DOUBLE_EQ(p.vram_expert_share(), 1.0);
    EXPECT_EQ(p.vram_unused, (1u << 20) - 150512u);
    // RAM: embedding 6400 + host workspace 14512 + reserve 1000; no expert needs a home there.
    EXPECT_EQ(p.ram_dense, 6400u);
    EXPECT_EQ(p.ram_context, 0u);
    EXPECT_EQ(p.ram_workspace, 14512u);
    EXPECT_EQ(p.ram_arena_experts, 0u);
    EXPECT_EQ(p.ram_unused, (1u << 20) - 21912u);
    EXPECT_EQ(p.disk_experts, 0u);
    EXPECT_TRUE(p.problems.empty());
    EXPECT_TRUE(p.suggestions.empty());
    EXPECT_TRUE(any_contains(p.explanation, "Every expert is resident"));
}

TEST(Planner, PartialCacheSplitsExpertsOverVramRamAndDisk) {
    // VRAM 148032: all resident would need 150512. With copy buffers the fixed part is
    // 34304 + 25600 + 74224 = 134128, + 4096 reserve = 138224; 9808 left = 3 slots (9216), 592 unused.
    // RAM: 6400 + 14512 + 1000 reserve = 21912; 28156 leaves 6244 = 2 arena slots (6144), 100 unused.
    // The other 3 experts stay on disk: 24384 · 3 / 8 = 9144 bytes.
    Plan p = toy_plan(toy_request(148032, 28156));
    ASSERT_TRUE(p.fits) << p.problems.front();
    EXPECT_EQ(p.vram_workspace.expert_staging, 12288u);
    EXPECT_EQ(p.vram_fixed(), 134128u);
    EXPECT_EQ(p.vram_expert_slots, 3u);
    EXPECT_EQ(p.vram_experts(), 9216u);
    EXPECT_EQ(p.vram_unused, 592u);
    EXPECT_EQ(p.ram_arena_experts, 2u);
    EXPECT_EQ(p.ram_unused, 100u);
    EXPECT_EQ(p.disk_experts, 3u);
    EXPECT_EQ(p.disk_expert_bytes, 9144u);
    EXPECT_DOUBLE_EQ(p.vram_expert_share(), 3.0 / 8);
    EXPECT_DOUBLE_EQ(p.disk_expert_share(), 3.0 / 8);
    // Experts on disk fit, but the plan warns and says how much RAM would avoid it (3 · 3072).
    EXPECT_TRUE(any_contains(p.notes, "read from disk"));
    EXPECT_TRUE(any_contains(p.notes, format_bytes(9216)));
}

TEST(Planner, APageLockLimitBelowTheExpertsIsExplained) {
    // Windows locks about half of RAM for the GPU: with a limit below the toy's 24384 bytes of
    // experts the plan says that copies of the layers past it are staged by the driver.
    PlanRequest r = toy_request(148032, 28156);
    r.page_lock_limit = 14078;
    Plan p = toy_plan(r);
    ASSERT_TRUE(p.fits);
    EXPECT_TRUE(any_contains(p.explanation, "The OS page-locks at most " + format_bytes(14078)));
    EXPECT_TRUE(any_contains(p.explanation, "of the " + format_bytes(24384) + " of expert tensors"));
    // Without a limit, or with all experts in VRAM (no copies), nothing is said.
    EXPECT_FALSE(any_contains(toy_plan(toy_request(148032, 28156)).explanation, "page-locks"));
    PlanRequest resident = toy_request(1 << 20, 1 << 20);
    resident.page_lock_limit = 14078;
    EXPECT_FALSE(any_contains(toy_plan(resident).explanation, "page-locks"));
}

TEST(Planner, BudgetAndFreeMemoryBoundTheCapacity) {
    PlanRequest budget = toy_request(1 << 20, 28156);
    budget.vram_budget = 148032;  // a 1 MiB card behaving as a 148032-byte one
    Plan a = toy_plan(budget);
    EXPECT_EQ(a.vram_capacity, 148032u);
    EXPECT_EQ(a.vram_expert_slots, 3u);

    PlanRequest busy = toy_request(1 << 20, 28156);
    busy.gpu->free_bytes = 148032;  // another program holds the rest
    Plan b = toy_plan(busy);
    EXPECT_EQ(b.vram_capacity, 148032u);
    EXPECT_EQ(b.vram_expert_slots, 3u);
}

TEST(Planner, VramBelowDenseAndKvIsRefusedNamingTheShortfall) {
    // Context 1024: KV 1024 · 256 = 262144. Fixed 34304 + 262144 + 74224 = 370672, + 4096 reserve
    // = 374768 against 300000: 74768 short.
    PlanRequest r = toy_request(300000, 1 << 20);
    r.n_ctx = 1024;
    Plan p = toy_plan(r);
    ASSERT_FALSE(p.fits);
    EXPECT_EQ(p.vram_shortfall, 74768u);
    EXPECT_EQ(p.vram_expert_slots, 0u);
    ASSERT_EQ(p.problems.size(), 1u);
    EXPECT_NE(p.problems[0].find(format_bytes(74768) + " short"), std::string::npos) << p.problems[0];
    EXPECT_NE(p.problems[0].find("KV cache " + format_bytes(262144)), std::string::npos) << p.problems[0];
    // Shorter context: 34304 + 74224 + 4096 + 256·ctx ≤ 300000 → ctx ≤ 731, so 512 (a multiple of 256).
    EXPECT_TRUE(any_contains(p.suggestions, "--ctx 512:"));
    // q8_0 KV: 1024 · 2 · 68 = 139264, plus one layer's rows in f16 for the GPU's attention, 1024 ·
    // 128 = 131072: 270336, more than f16's 262144 with two layers, so not suggested.
    EXPECT_FALSE(any_contains(p.suggestions, "--kv-type q8_0"));
    // The reserve (4096) cannot cover 74768.
    EXPECT_FALSE(any_contains(p.suggestions, "--vram-reserve"));
    // The CPU alone: 40704 + 262144 + 61104 + 1000 fits in 1 MiB of RAM.
    EXPECT_TRUE(any_contains(p.suggestions, "--vram 0"));
    EXPECT_TRUE(any_contains(p.suggestions, format_bytes(374768) + " of VRAM"));
    EXPECT_TRUE(any_contains(p.suggestions, "a smaller quant"));
}

TEST(Planner, EverySuggestionFitsWhenApplied) {
    PlanRequest r = toy_request(300000, 1 << 20);
    r.n_ctx = 1024;
    PlanRequest shorter = r;
    shorter.n_ctx = 512;
    EXPECT_TRUE(toy_plan(shorter).fits);
    shorter.n_ctx = 768;  // the next multiple of 256 does not: the search found the longest
    EXPECT_FALSE(toy_plan(shorter).fits);
    PlanRequest q8 = r;  // not suggested: 34304 + 270336 + 74224 + 4096 = 382960 > 300000
    q8.kv_type = KvCacheType::Q8_0;
    EXPECT_FALSE(toy_plan(q8).fits);
    PlanRequest cpu = r;
    cpu.gpu.reset();
    EXPECT_TRUE(toy_plan(cpu).fits);
}

TEST(Planner, SmallShortfallSuggestsASmallerReserve) {
    // All-resident needs 150512 with the 4096 reserve, staged 138224: at 136032 VRAM 2192 short.
    // The suggested reserve is 4096 - 2192 rounded down to whole MiB: 0 MiB, and with it 134128 fits.
    Plan p = toy_plan(toy_request(136032, 1 << 20));
    ASSERT_FALSE(p.fits);
    EXPECT_EQ(p.vram_shortfall, 2192u);
    EXPECT_TRUE(any_contains(p.suggestions, "--vram-reserve 0MiB"));
}

TEST(Planner, NoGpuPutsEverythingInRam) {
    // RAM: all dense 40704 + KV 25600 + workspace 59904 + sampler 1200 = 127408, + 1000 reserve;
    // 1 MiB leaves 920168: all 8 experts (24576) in the arena, 895592 unused.
    Plan p = toy_plan(toy_request(0, 1 << 20));
    ASSERT_TRUE(p.fits);
    EXPECT_FALSE(p.has_gpu);
    EXPECT_EQ(p.vram_capacity, 0u);
    EXPECT_TRUE(p.vram_segments().empty());
    EXPECT_EQ(p.ram_dense, 40704u);
    EXPECT_EQ(p.ram_context, 25600u);
    EXPECT_EQ(p.ram_workspace, 61104u);
    EXPECT_EQ(p.ram_arena_experts, 8u);
    EXPECT_EQ(p.ram_unused, 895592u);
    EXPECT_EQ(p.disk_experts, 0u);
    EXPECT_TRUE(any_contains(p.explanation, "No GPU"));
}

TEST(Planner, ShortRamLeavesExpertsOnDisk) {
    // 127408 + 1000 + 2 · 3072 + 10 = 134562: two experts in the arena, six on disk (18288 bytes).
    Plan p = toy_plan(toy_request(0, 134562));
    ASSERT_TRUE(p.fits);
    EXPECT_EQ(p.ram_arena_experts, 2u);
    EXPECT_EQ(p.ram_unused, 10u);
    EXPECT_EQ(p.disk_experts, 6u);
    EXPECT_EQ(p.disk_expert_bytes, 18288u);
    EXPECT_TRUE(any_contains(p.notes, "6 experts"));
}

TEST(Planner, RamBelowTheFixedPartIsRefused) {
    // 128408 needed, 100000 available: 28408 short.
    Plan p = toy_plan(toy_request(0, 100000));
    ASSERT_FALSE(p.fits);
    EXPECT_EQ(p.ram_shortfall, 28408u);
    EXPECT_TRUE(any_contains(p.problems, format_bytes(28408) + " short"));
    EXPECT_TRUE(any_contains(p.suggestions, "more RAM: " + format_bytes(28408)));
    // Context 100 is below the search's 256-token step, so no --ctx suggestion (and even no KV at
    // all would leave 40704 + 61104 + 1000 = 102808 > 100000).
    EXPECT_FALSE(any_contains(p.suggestions, "--ctx"));
}

TEST(Planner, DenseModelNeedsAllItsWeightsInVram) {
    // Dense toy: 50944 bytes, 44544 in VRAM (embedding on the host). Plenty of room: fits, no slots.
    Plan p = toy_plan(toy_request(1 << 20, 1 << 20), false);
    ASSERT_TRUE(p.fits);
    EXPECT_EQ(p.vram_dense, 44544u);
    EXPECT_EQ(p.vram_expert_slots, 0u);
    EXPECT_EQ(p.vram_workspace.expert_staging, 0u);
    EXPECT_EQ(p.disk_experts, 0u);
    EXPECT_TRUE(any_contains(p.explanation, "a dense model"));
    // Too small a card is refused like any other.
    EXPECT_FALSE(toy_plan(toy_request(40000, 1 << 20), false).fits);
}

// Whatever the sizes, a plan accounts for every byte of its capacity and every expert, and a
// FITS plan never promises more than the capacity.
TEST(Planner, AccountingInvariantsOverAGridOfSizes) {
    for (uint64_t vram = 0; vram <= 400000; vram += 9973) {
        for (uint64_t ram = 90000; ram <= 200000; ram += 10007) {
            Plan p = toy_plan(toy_request(vram, ram));
            SCOPED_TRACE(testing::Message() << "vram " << vram << " ram " << ram);
            EXPECT_EQ(p.vram_expert_slots + p.ram_arena_experts + p.disk_experts, p.weights.expert_count);
            EXPECT_EQ(p.fits, p.vram_shortfall == 0 && p.ram_shortfall == 0);
            EXPECT_EQ(p.fits, p.problems.empty());
            if (p.has_gpu && p.vram_shortfall == 0) {
                EXPECT_EQ(p.vram_fixed() + p.vram_reserve + p.vram_experts() + p.vram_unused, p.vram_capacity);
                // Leftover is less than a slot unless every expert already has one.
                if (p.vram_expert_slots < p.weights.expert_count) {
                    EXPECT_LT(p.vram_unused, p.expert_slot_bytes);
                }
                // Copy buffers exist exactly when some expert is not resident.
                EXPECT_EQ(p.vram_workspace.expert_staging > 0, p.vram_expert_slots < p.weights.expert_count);
            }
            if (p.ram_shortfall == 0) {
                EXPECT_EQ(p.ram_fixed() + p.ram_reserve + p.ram_arena_bytes() + p.ram_unused, p.ram_capacity);
                if (p.disk_experts > 0) {
                    EXPECT_LT(p.ram_unused, p.expert_slot_bytes);
                }
            }
            if (!p.fits) {
                EXPECT_FALSE(p.suggestions.empty());
            }
        }
    }
}

TEST(Planner, ContextBeyondTrainingIsANote) {
    PlanRequest r = toy_request(1 << 20, 1 << 20);
    r.n_ctx = 8192;  // toy trained on 4096
    Plan p = toy_plan(r);
    EXPECT_TRUE(any_contains(p.notes, "longer than the 4096 tokens"));
}

}  // namespace
}  // namespace strata
