// The PLE table's tiers (model/ple_table.h): from the mapping, from RAM and from the disk (with
// and without O_DIRECT) every row comes back as the type's reference dequantizes it from the
// file's bytes, rows that straddle an alignment unit and the table's last rows (cut short by the
// file's end) included; the disk tier counts what it read.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "model/ple_table.h"
#include "model/random_weights.h"
#include "model/weights.h"
#include "quant/traits.h"
#include "gguf/tensor_type.h"
#include "gguf/writer.h"
#include "support/scratch.h"

namespace strata {
namespace {

class PleTableTest : public ::testing::TestWithParam<TensorType> {
protected:
    // A file whose only tensor is a table of `rows` rows of 160 values, as the real files' shard 2.
    void write_table(int64_t rows) {
        rows_ = rows;
        std::mt19937 rng(7);
        RandomWeight w = make_random_weight(GetParam(), kWidth, rows, 1, rng);
        GgufWriter writer;
        writer.set_string("general.architecture", "qwen4exp");
        ASSERT_TRUE(writer.add_tensor("per_layer_token_embd.weight", GetParam(), {kWidth, static_cast<uint64_t>(rows)},
                                      w.bytes));
        ASSERT_TRUE(writer.write(dir_.path("table.gguf")));
        auto opened = GgufFile::open(dir_.path("table.gguf"));
        ASSERT_TRUE(opened) << opened.status().message();
        file_.emplace(std::move(*opened));
        WeightLoader load(*file_);
        table_ = load.require("per_layer_token_embd.weight", {kWidth, rows});
        ASSERT_TRUE(load.status()) << load.status().message();
    }

    // The rows as the reference dequantizes them from the file's bytes.
    std::vector<float> reference(const std::vector<int32_t>& ids) const {
        std::vector<float> out(ids.size() * kWidth);
        for (size_t i = 0; i < ids.size(); ++i) {
            quant_traits(table_.type).dequantize_row(table_.row(ids[i]), out.data() + i * kWidth, kWidth);
        }
        return out;
    }

    // What the disk tier reads for these rows: each row's bytes, or with O_DIRECT the whole 4 KiB
    // units that hold them (up to the file's end).
    uint64_t read_bytes(const std::vector<int32_t>& ids, bool direct) const {
        const uint64_t unit = File::kUnbufferedAlignment, size = file_->total_file_bytes();
        uint64_t total = 0;
        for (int32_t id : ids) {
            const uint64_t at = table_.info->offset + static_cast<uint64_t>(id) * table_.row_bytes;
            if (!direct) {
                total += table_.row_bytes;
                continue;
            }
            const uint64_t begin = at / unit * unit;
            total += std::min((at + table_.row_bytes + unit - 1) / unit * unit, size) - begin;
        }
        return total;
    }

    static constexpr int64_t kWidth = 160;
    test::ScratchDir dir_;
    std::optional<GgufFile> file_;
    Weight table_;
    int64_t rows_ = 0;
    ThreadPool pool_{ThreadPool::Options{.threads = 2}};
};

TEST_P(PleTableTest, EveryTierGivesTheReferenceRows) {
    write_table(3001);  // 90-byte IQ4_NL rows: many straddle a 4 KiB unit, the last ones end the file
    std::vector<int32_t> ids;
    std::mt19937 rng(3);
    for (int i = 0; i < 200; ++i) ids.push_back(static_cast<int32_t>(rng() % rows_));
    for (int32_t last = static_cast<int32_t>(rows_) - 3; last < rows_; ++last) ids.push_back(last);
    ids.push_back(0);
    const std::vector<float> want = reference(ids);

    const PleTableOptions cases[] = {{PleTableTier::Auto}, {PleTableTier::Mapped}, {PleTableTier::Ram},
                                     {PleTableTier::Ssd, true}, {PleTableTier::Ssd, false}};
    for (const PleTableOptions& options : cases) {
        uint64_t progress_calls = 0;
        PleTableOptions o = options;
        o.progress = [&](uint64_t done, uint64_t total) { progress_calls += done <= total; };
        auto table = PleTable::open(*file_, table_, o);
        ASSERT_TRUE(table) << table.status().message();
        SCOPED_TRACE(std::string(ple_table_tier_name(o.tier)) + ((*table)->direct_io() ? " direct" : ""));
        // Without a plan, auto reads through the mapping.
        EXPECT_EQ((*table)->tier(), o.tier == PleTableTier::Auto ? PleTableTier::Mapped : o.tier);
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool_}) {
            std::vector<float> got(want.size());
            (*table)->get_rows(ids.data(), static_cast<int64_t>(ids.size()), got.data(), pool);
            EXPECT_EQ(got, want);
            // One row (a decode step looks up a few) as well.
            std::vector<float> one(kWidth);
            (*table)->get_rows(&ids[7], 1, one.data(), pool);
            EXPECT_EQ(one, std::vector<float>(want.begin() + 7 * kWidth, want.begin() + 8 * kWidth));
        }
        const PleTableStats st = (*table)->stats();
        EXPECT_EQ(st.rows, 2 * (ids.size() + 1));
        if (o.tier == PleTableTier::Ssd) {
            // Repeated rows (and neighbours in one read's span) are read once: never more reads
            // or bytes than one per row, never fewer bytes than the distinct rows hold.
            std::vector<int32_t> distinct(ids);
            std::sort(distinct.begin(), distinct.end());
            distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
            EXPECT_LE(st.disk_reads, static_cast<uint64_t>(2 * distinct.size() + 1));
            EXPECT_LE(st.disk_bytes, 2 * (read_bytes(ids, (*table)->direct_io()) + read_bytes({ids[7]}, (*table)->direct_io())));
            EXPECT_GE(st.disk_bytes, 2 * distinct.size() * table_.row_bytes);
        } else {
            EXPECT_EQ(st.disk_reads, 0u);
        }
        EXPECT_EQ((*table)->resident_bytes() > 0, o.tier == PleTableTier::Ram);
        if (o.tier == PleTableTier::Ram) {
            EXPECT_GT(progress_calls, 0u);
        }
    }
}

// The real files' type (IQ4_NL) and the f16 / q8_0 a converter or quantizer may also write.
INSTANTIATE_TEST_SUITE_P(Types, PleTableTest, ::testing::Values(TensorType::IQ4_NL, TensorType::F16, TensorType::Q8_0),
                         [](const ::testing::TestParamInfo<TensorType>& param) {
                             return std::string(tensor_type_name(param.param));
                         });

TEST_P(PleTableTest, APromptsRepeatedAndNeighbouringRowsAreOneRead) {
    write_table(3001);
    for (bool direct : {true, false}) {
        auto table = PleTable::open(*file_, table_, PleTableOptions{PleTableTier::Ssd, direct});
        ASSERT_TRUE(table) << table.status().message();
        // Sixteen times one row (a repeated n-gram across a prompt), then two neighbours.
        const std::vector<int32_t> same(16, 1234), pair{2000, 2001};
        for (const std::vector<int32_t>& ids : {same, pair}) {
            const PleTableStats before = (*table)->stats();
            std::vector<float> got(ids.size() * kWidth);
            (*table)->get_rows(ids.data(), static_cast<int64_t>(ids.size()), got.data(), &pool_);
            EXPECT_EQ(got, reference(ids));
            EXPECT_EQ((*table)->stats().disk_reads - before.disk_reads, 1u) << ids.size() << " rows, direct " << direct;
        }
    }
}

TEST(PleTableTier, NamesParseBothWays) {
    for (PleTableTier t : {PleTableTier::Auto, PleTableTier::Mapped, PleTableTier::Ram, PleTableTier::Ssd}) {
        EXPECT_EQ(parse_ple_table_tier(ple_table_tier_name(t)), t);
    }
    EXPECT_FALSE(parse_ple_table_tier("disk").has_value());
}

}  // namespace
}  // namespace strata
