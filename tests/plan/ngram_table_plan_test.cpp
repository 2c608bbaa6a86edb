// The memory plan of Qwen3.8-Flash-Next, whose n-gram (PLE) table is 28.8 GB of its 66-112 GB:
// the table is neither dense weight (it never goes to VRAM) nor expert; a token reads 16 of its
// rows. The inventory is the synthetic file's (model/synth_qwen4exp.h, held against the published
// header by tests/model/synth_qwen4exp_header_test.cpp), taken without writing it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "model/synth_qwen4exp.h"
#include "plan/model_bytes.h"
#include "plan/planner.h"
#include "plan/units.h"
#include "support/scratch.h"

namespace strata {
namespace {

// The published table's bytes (REAL_GGUFS.md A1: shard 2 is the table and a 192-byte header).
constexpr uint64_t kTableBytes = 28'800'138'240;

ModelInventory flash_inventory(const std::string& mix) {
    Qwen4ExpSynthSpec spec;
    spec.mix = mix;
    auto shards = qwen4exp_trunk_plan(spec, nullptr);
    EXPECT_TRUE(shards) << shards.status().message();
    ModelInventory inv;
    inv.name = "Qwen3.8-Flash-Next " + mix;
    // The config as the loader reads it: the first shard's keys in a file of their own.
    test::ScratchDir dir;
    GgufWriter keys;
    for (const auto& [key, value] : (*shards)[0].metadata) {
        if (key.rfind("split.", 0) != 0) keys.set(key, value);  // one file here, not the first of two
    }
    EXPECT_TRUE(keys.write(dir.path("keys.gguf")));
    auto file = GgufFile::open(dir.path("keys.gguf"));
    EXPECT_TRUE(file) << file.status().message();
    auto cfg = ModelConfig::from_gguf(*file);
    EXPECT_TRUE(cfg) << cfg.status().message();
    inv.config = *cfg;
    for (const SynthFile& shard : *shards) {
        for (const SynthTensor& t : shard.tensors) {
            GgufTensorInfo info;
            info.name = t.name;
            info.type = t.type;
            info.n_dims = static_cast<uint32_t>(t.ne.size());
            info.n_elements = t.elements();
            for (size_t i = 0; i < t.ne.size(); ++i) info.ne[i] = t.ne[i];
            info.n_bytes = t.bytes();
            inv.tensors.push_back(info);
            inv.file_bytes += info.n_bytes;
        }
    }
    return inv;
}

Plan flash_plan(const ModelInventory& inv, uint64_t vram, uint64_t ram) {
    auto w = summarize_weights(inv);
    EXPECT_TRUE(w) << w.status().message();
    PlanRequest req;
    req.gpu = DeviceMemory{"a 12 GB card", vram, vram};
    req.ram_bytes = ram;
    req.n_ctx = 32768;
    return make_plan(inv, *w, req);
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

TEST(NgramTablePlan, TheTableIsNeitherDenseNorExpertAndATokenReadsSixteenRows) {
    const ModelInventory inv = flash_inventory("ud-q4_k_xl");
    auto w = summarize_weights(inv);
    ASSERT_TRUE(w) << w.status().message();
    EXPECT_EQ(w->ngram_table_bytes, kTableBytes);
    EXPECT_EQ(w->ngram_row_bytes, 90u);  // 160 IQ4_NL values
    EXPECT_EQ(w->ngram_rows_per_token, 16u);
    EXPECT_EQ(w->total_bytes, w->dense_bytes + w->expert_bytes + w->ngram_table_bytes);
    EXPECT_LT(w->dense_vram_bytes(), uint64_t{10} << 30);  // with the table it would be ~37 GB
}

TEST(NgramTablePlan, OnATwelveGigabyteCardTheTableGoesToRamOnlyAfterEveryExpert) {
    const ModelInventory inv = flash_inventory("q2_0");
    // 64 GB of RAM: the Q2_0 file's experts (34 GB arena) fit, and the table after them.
    const Plan roomy = flash_plan(inv, 12 * kGiB, 64 * kGiB);
    ASSERT_TRUE(roomy.fits) << (roomy.problems.empty() ? "" : roomy.problems[0]);
    EXPECT_EQ(roomy.disk_experts, 0u);
    EXPECT_EQ(roomy.ram_ngram_table, kTableBytes);
    EXPECT_EQ(roomy.disk_ngram_table, 0u);
    EXPECT_TRUE(any_contains(roomy.explanation, "read into RAM"));
    const auto segs = roomy.ram_segments();
    EXPECT_TRUE(std::any_of(segs.begin(), segs.end(), [](const MemorySegment& s) { return s.key == "ngram" && s.bytes == kTableBytes; }));

    // 48 GB: the experts take the RAM; the table stays on the SSD, 16 rows of 90 bytes a token.
    const Plan tight = flash_plan(inv, 12 * kGiB, 48 * kGiB);
    ASSERT_TRUE(tight.fits) << (tight.problems.empty() ? "" : tight.problems[0]);
    EXPECT_EQ(tight.ram_ngram_table, 0u);
    EXPECT_EQ(tight.disk_ngram_table, kTableBytes);
    EXPECT_TRUE(any_contains(tight.explanation, "stays on the SSD"));
}

}  // namespace
}  // namespace strata
