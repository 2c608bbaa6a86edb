// The KV cache's entry planes (deepseek4's compressed entries and indexer keys) and the widened
// key rows its attention reads.
#include <gtest/gtest.h>

#include <vector>

#include "kv/kv_cache.h"

namespace strata {
namespace {

TEST(KvEntryPlanes, EachLayerHasItsOwnRowsAndTheyAreCounted) {
    KvCache kv(3, 16, 32, 0, KvCacheType::F32);
    const uint64_t rows_only = kv.bytes();
    EXPECT_EQ(rows_only, 3u * 16 * 32 * 4);  // keys only: no value plane
    const int plane = kv.add_entry_plane({0, 4, 128 / 32}, 8);
    EXPECT_EQ(kv.entry_dim(plane), 8);
    EXPECT_EQ(kv.entry_rows(plane, 0), 0);
    EXPECT_EQ(kv.entry_rows(plane, 1), 4);
    EXPECT_EQ(kv.bytes(), rows_only + (4 + 4) * 8 * 4);
    for (int64_t i = 0; i < 4; ++i) {
        for (int64_t c = 0; c < 8; ++c) kv.entry(plane, 1, i)[c] = static_cast<float>(i * 8 + c);
    }
    for (int64_t c = 0; c < 8; ++c) kv.entry(plane, 2, 3)[c] = -1.0f;
    EXPECT_EQ(kv.entry(plane, 1, 3)[7], 31.0f);  // the layers do not share rows
    EXPECT_EQ(kv.entry(plane, 1, 1) - kv.entry(plane, 1, 0), 8);
    EXPECT_DEATH(kv.entry(plane, 1, 4), "entry past");
    EXPECT_DEATH(kv.entry(plane, 0, 0), "entry past");
}

TEST(KvEntryPlanes, KeyRowsWidenToF32) {
    std::vector<float> row(64);
    for (size_t i = 0; i < row.size(); ++i) row[i] = 0.25f * static_cast<float>(i) - 3.0f;  // exact in f16
    for (KvCacheType type : {KvCacheType::F32, KvCacheType::F16, KvCacheType::Q8_0}) {
        KvCache kv(1, 4, 64, 0, type);
        kv.store(0, 2, row.data(), row.data());
        std::vector<float> back(64);
        kv.key_row_f32(0, 2, back.data());
        for (size_t i = 0; i < row.size(); ++i) {
            // q8_0 rounds to 1/127 of each block's largest magnitude.
            EXPECT_NEAR(back[i], row[i], type == KvCacheType::Q8_0 ? 13.0f / 127.0f : 0.0f) << kv_type_name(type);
        }
    }
}

}  // namespace
}  // namespace strata
