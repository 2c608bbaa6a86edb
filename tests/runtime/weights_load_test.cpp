// --load's choice (runtime/weights_load.h) on hand-made cases: explicit modes are kept; auto reads
// into memory only on the CPU, with huge pages, for a file within 3/4 of the available RAM.
#include "runtime/weights_load.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

constexpr uint64_t kGiB = uint64_t(1) << 30;

TEST(WeightsLoad, ExplicitModesAreKept) {
    for (bool cpu : {false, true}) {
        EXPECT_EQ(choose_gguf_load(WeightsLoad::Map, cpu, true, kGiB, 64 * kGiB), GgufLoad::Map);
        EXPECT_EQ(choose_gguf_load(WeightsLoad::Memory, cpu, false, 100 * kGiB, kGiB), GgufLoad::Memory);
    }
}

TEST(WeightsLoad, AutoReadsIntoMemoryOnlyWhenItPays) {
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, true, true, 3 * kGiB, 20 * kGiB), GgufLoad::Memory);
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, false, true, 3 * kGiB, 20 * kGiB), GgufLoad::Map) << "a GPU run";
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, true, false, 3 * kGiB, 20 * kGiB), GgufLoad::Map) << "no huge pages";
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, true, true, 0, 20 * kGiB), GgufLoad::Map) << "unknown size";
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, true, true, 3 * kGiB, 0), GgufLoad::Map) << "unknown RAM";
}

TEST(WeightsLoad, AutoKeepsAQuarterOfTheAvailableRamFree) {
    // 16 GiB available: 12 GiB is the largest file read into memory.
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, true, true, 12 * kGiB, 16 * kGiB), GgufLoad::Memory);
    EXPECT_EQ(choose_gguf_load(WeightsLoad::Auto, true, true, 12 * kGiB + 1, 16 * kGiB), GgufLoad::Map);
}

TEST(WeightsLoad, AutoMapsWhenTheModelMayRunOnAGpu) {
    ComputeOptions gpu;
    gpu.device = ComputeDevice::Gpu;
    gpu.weights_load = WeightsLoad::Auto;
    EXPECT_EQ(gguf_load_for(gpu, "no-such-file.gguf"), GgufLoad::Map);
    ComputeOptions cpu;
    cpu.weights_load = WeightsLoad::Auto;
    EXPECT_EQ(gguf_load_for(cpu, "no-such-file.gguf"), GgufLoad::Map) << "a file that cannot be sized is mapped";
}

}  // namespace
}  // namespace strata
