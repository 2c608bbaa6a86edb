// Malformed GGUF input: every case must give a clear error (never a crash, a hang, or an
// out-of-bounds read — run this binary under ASan to prove the last one; the fuzz target does).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "core/file.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "support/scratch.h"

namespace strata {
namespace {

std::vector<uint8_t> valid_file() {
    test::ScratchDir dir;
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_u32("llama.block_count", 1);
    w.set_string_array("tokenizer.ggml.tokens", {"a", "b"});
    EXPECT_TRUE(w.add_tensor("token_embd.weight", TensorType::F32, {4, 2}, std::vector<uint8_t>(32, 1)));
    EXPECT_TRUE(w.add_tensor("blk.0.attn_q.weight", TensorType::Q8_0, {32, 2}, std::vector<uint8_t>(68, 2)));
    EXPECT_TRUE(w.write(dir.path("v.gguf")));
    auto s = read_file_to_string(dir.path("v.gguf"));
    return std::vector<uint8_t>(s->begin(), s->end());
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
    auto r = GgufFile::parse_memory(bytes.data(), bytes.size(), "m.gguf");
    return r ? std::string() : r.status().message();
}

// Offsets inside valid_file(): header is magic(4) version(4) n_tensors(8) n_kv(8).
constexpr size_t kVersionAt = 4, kTensorCountAt = 8, kKvCountAt = 16, kFirstKeyLenAt = 24;

template <typename T>
void poke(std::vector<uint8_t>& b, size_t at, T v) { std::memcpy(b.data() + at, &v, sizeof(T)); }

TEST(GgufMalformed, ValidFileParses) { EXPECT_EQ(parse_error(valid_file()), ""); }

TEST(GgufMalformed, BadMagic) {
    auto b = valid_file();
    std::memcpy(b.data(), "GGML", 4);
    EXPECT_EQ(parse_error(b), "not a GGUF file: expected magic \"GGUF\", got \"GGML\" (is this a GGUF model?)");
}

TEST(GgufMalformed, UnsupportedVersions) {
    auto b = valid_file();
    poke<uint32_t>(b, kVersionAt, 1);
    EXPECT_NE(parse_error(b).find("expected 2 or 3, got 1"), std::string::npos);
    poke<uint32_t>(b, kVersionAt, 99);
    EXPECT_NE(parse_error(b).find("expected 2 or 3, got 99"), std::string::npos);
}

TEST(GgufMalformed, HugeCountsAreRejectedBeforeAllocating) {
    auto b = valid_file();
    poke<uint64_t>(b, kTensorCountAt, uint64_t(1) << 62);
    EXPECT_NE(parse_error(b).find("tensor count"), std::string::npos);
    b = valid_file();
    poke<uint64_t>(b, kKvCountAt, ~uint64_t(0));
    EXPECT_NE(parse_error(b).find("metadata count"), std::string::npos);
    b = valid_file();
    poke<uint64_t>(b, kFirstKeyLenAt, uint64_t(1) << 40);  // key length
    EXPECT_NE(parse_error(b).find("metadata entry 0 key"), std::string::npos);
}

// Cutting the file anywhere before the end of the last tensor's data is an error; only the
// trailing alignment padding may be missing.
TEST(GgufMalformed, EveryTruncationIsAnError) {
    auto full = valid_file();
    auto parsed = GgufFile::parse_memory(full.data(), full.size(), "m.gguf");
    ASSERT_TRUE(parsed);
    uint64_t data_end = 0;
    for (const auto& t : parsed->tensors()) data_end = std::max(data_end, t.offset + t.n_bytes);
    ASSERT_LT(data_end, full.size());  // the writer pads the last tensor
    for (size_t n = 0; n < full.size(); ++n) {
        std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(n));
        std::string err = parse_error(cut);
        if (n < data_end) {
            EXPECT_FALSE(err.empty()) << "truncated to " << n << " bytes was accepted";
        } else {
            EXPECT_TRUE(err.empty()) << "only padding missing, but: " << err;
        }
    }
}

// Every byte replaced by a few interesting values: the parser must answer (ok or error) without
// crashing; tensors it accepts must lie inside the buffer.
TEST(GgufMalformed, SingleByteCorruptionSweep) {
    auto full = valid_file();
    size_t accepted = 0, rejected = 0;
    for (size_t at = 0; at < full.size(); ++at) {
        for (uint8_t v : {uint8_t(0x00), uint8_t(0x01), uint8_t(0x7f), uint8_t(0x80), uint8_t(0xff)}) {
            auto b = full;
            b[at] = v;
            auto r = GgufFile::parse_memory(b.data(), b.size(), "m.gguf");
            if (!r) {
                ++rejected;
                EXPECT_FALSE(r.status().message().empty());
                continue;
            }
            ++accepted;
            for (const auto& t : r->tensors()) {
                ASSERT_LE(t.offset + t.n_bytes, b.size()) << t.name;
            }
        }
    }
    EXPECT_GT(rejected, 0u);
    EXPECT_GT(accepted, 0u);  // corrupting tensor data bytes is not detectable, and must be accepted
}

TEST(GgufMalformed, RandomGarbageAfterAValidHeader) {
    std::mt19937 rng(7);
    for (int round = 0; round < 2000; ++round) {
        std::vector<uint8_t> b(24 + rng() % 200);
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        std::memcpy(b.data(), "GGUF", 4);
        poke<uint32_t>(b, kVersionAt, 3);
        poke<uint64_t>(b, kTensorCountAt, rng() % 4);
        poke<uint64_t>(b, kKvCountAt, rng() % 4);
        (void)GgufFile::parse_memory(b.data(), b.size(), "m.gguf");
    }
}

TEST(GgufMalformed, SpecificStructuralErrors) {
    test::ScratchDir dir;
    {   // row length not a multiple of the block size: written by hand since our writer refuses it
        GgufWriter w;
        ASSERT_TRUE(w.add_tensor("t", TensorType::Q8_0, {32}, std::vector<uint8_t>(34)));
        ASSERT_TRUE(w.write(dir.path("a.gguf")));
        auto s = read_file_to_string(dir.path("a.gguf"));
        std::vector<uint8_t> b(s->begin(), s->end());
        // tensor info: name len(8) "t"(1) n_dims(4) ne0(8) type(4) offset(8), right after the header
        size_t ne0_at = 24 + 8 + 1 + 4;
        poke<uint64_t>(b, ne0_at, 33);
        EXPECT_NE(parse_error(b).find("expected a row length that is a multiple of 32 for Q8_0, got 33"),
                  std::string::npos) << parse_error(b);
        poke<uint64_t>(b, ne0_at, 32);
        poke<uint32_t>(b, ne0_at + 8, 77);  // unknown type id
        EXPECT_NE(parse_error(b).find("unknown tensor type id 77"), std::string::npos);
        poke<uint32_t>(b, ne0_at + 8, 8);
        poke<uint64_t>(b, ne0_at + 12, 3);  // misaligned offset
        EXPECT_NE(parse_error(b).find("aligned to 32"), std::string::npos);
        poke<uint32_t>(b, 24 + 8 + 1, 5);  // five dimensions
        EXPECT_NE(parse_error(b).find("expected 1 to 4 dimensions, got 5"), std::string::npos);
    }
    {   // dimensions whose product overflows
        GgufWriter w;
        ASSERT_TRUE(w.add_tensor("t", TensorType::F32, {1, 1}, std::vector<uint8_t>(4)));
        ASSERT_TRUE(w.write(dir.path("b.gguf")));
        auto s = read_file_to_string(dir.path("b.gguf"));
        std::vector<uint8_t> b(s->begin(), s->end());
        size_t ne_at = 24 + 8 + 1 + 4;
        poke<uint64_t>(b, ne_at, uint64_t(1) << 40);
        poke<uint64_t>(b, ne_at + 8, uint64_t(1) << 40);
        EXPECT_NE(parse_error(b).find("overflows"), std::string::npos) << parse_error(b);
    }
    {   // two tensors whose data overlap
        GgufWriter w;
        ASSERT_TRUE(w.add_tensor("a", TensorType::F32, {16}, std::vector<uint8_t>(64)));
        ASSERT_TRUE(w.add_tensor("b", TensorType::F32, {16}, std::vector<uint8_t>(64)));
        ASSERT_TRUE(w.write(dir.path("c.gguf")));
        auto s = read_file_to_string(dir.path("c.gguf"));
        std::vector<uint8_t> b(s->begin(), s->end());
        size_t second_offset_at = 24 + (8 + 1 + 4 + 8 + 4 + 8) + (8 + 1 + 4 + 8 + 4);
        poke<uint64_t>(b, second_offset_at, 32);
        EXPECT_NE(parse_error(b).find("overlaps"), std::string::npos) << parse_error(b);
    }
    {   // duplicate metadata key and bad alignment value
        GgufWriter w;
        w.set_u32("general.alignment", 3);
        ASSERT_TRUE(w.write(dir.path("d.gguf")));
        auto s = read_file_to_string(dir.path("d.gguf"));
        std::vector<uint8_t> b(s->begin(), s->end());
        EXPECT_NE(parse_error(b).find("general.alignment: expected a u32 power of two"), std::string::npos);
    }
}

}  // namespace
}  // namespace strata
