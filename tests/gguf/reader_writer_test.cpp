// Round trips through our writer and reader, and reads of the outside reference files.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/file.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "support/scratch.h"
#include "support/testdata.h"

namespace strata {
namespace {

std::vector<uint8_t> pattern_bytes(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31);
    return v;
}

TEST(GgufRoundTrip, EveryMetadataTypeAndTensorsSurvive) {
    test::ScratchDir dir;
    GgufWriter w;
    w.set_u8("t.u8", 200);
    w.set_i8("t.i8", -100);
    w.set_u16("t.u16", 60000);
    w.set_i16("t.i16", -30000);
    w.set_u32("t.u32", 4000000000u);
    w.set_i32("t.i32", -2000000000);
    w.set_u64("t.u64", 18000000000000000000ull);
    w.set_i64("t.i64", -9000000000000000000ll);
    w.set_f32("t.f32", 0.125f);
    w.set_f64("t.f64", 1e300);
    w.set_bool("t.bool", true);
    w.set_string("t.str", std::string("with\0nul and ünïcode", 21));
    w.set_string_array("t.strs", {"a", "", "ccc"});
    w.set_i32_array("t.ints", {1, -2, 3});
    w.set("t.nested", GgufValue::make_array(GgufValueType::ARRAY,
                                            {GgufValue::make_array(GgufValueType::U8, {GgufValue::make_int(GgufValueType::U8, 7)}),
                                             GgufValue::make_array(GgufValueType::STRING, {})}));
    ASSERT_TRUE(w.set_alignment(64));
    ASSERT_TRUE(w.add_tensor("a", TensorType::F32, {3, 2}, pattern_bytes(24, 1)));
    ASSERT_TRUE(w.add_tensor("b", TensorType::Q4_K, {512, 3}, pattern_bytes(144 * 2 * 3, 2)));
    ASSERT_TRUE(w.add_tensor("c", TensorType::Q8_0, {64}, pattern_bytes(68, 3)));
    ASSERT_TRUE(w.write(dir.path("rt.gguf")));

    auto r = GgufFile::open(dir.path("rt.gguf"));
    ASSERT_TRUE(r) << r.status().message();
    const GgufFile& f = *r;
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.get_uint("t.u8", 0), 200u);
    EXPECT_EQ(f.find("t.u8")->type, GgufValueType::U8);
    EXPECT_EQ(f.get_int("t.i8", 0), -100);
    EXPECT_EQ(f.get_uint("t.u16", 0), 60000u);
    EXPECT_EQ(f.get_int("t.i16", 0), -30000);
    EXPECT_EQ(f.get_uint("t.u32", 0), 4000000000u);
    EXPECT_EQ(f.get_int("t.i32", 0), -2000000000);
    EXPECT_EQ(f.get_uint("t.u64", 0), 18000000000000000000ull);
    EXPECT_EQ(f.get_int("t.i64", 0), -9000000000000000000ll);
    EXPECT_EQ(f.get_float("t.f32", 0), 0.125);
    EXPECT_EQ(f.get_float("t.f64", 0), 1e300);
    EXPECT_TRUE(f.get_bool("t.bool", false));
    EXPECT_EQ(f.get_string("t.str", ""), std::string("with\0nul and ünïcode", 21));
    const auto& strs = f.find("t.strs")->as_array();
    ASSERT_EQ(strs.items.size(), 3u);
    EXPECT_EQ(strs.items[2].as_string(), "ccc");
    EXPECT_EQ(f.find("t.ints")->as_array().items[1].as_int(), -2);
    const auto& nested = f.find("t.nested")->as_array();
    ASSERT_EQ(nested.items.size(), 2u);
    EXPECT_EQ(nested.items[0].as_array().items[0].as_uint(), 7u);
    EXPECT_EQ(nested.items[1].as_array().element_type, GgufValueType::STRING);
    EXPECT_EQ(f.get_int("missing", 42), 42);
    EXPECT_EQ(f.get_int("t.str", 42), 42);  // wrong type answers the default
    EXPECT_FALSE(f.require_uint("t.str"));
    EXPECT_FALSE(f.require_uint("t.i8"));  // negative

    ASSERT_EQ(f.tensors().size(), 3u);
    const GgufTensorInfo* b = f.tensor("b");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->type, TensorType::Q4_K);
    EXPECT_EQ(b->ne[0], 512u);
    EXPECT_EQ(b->ne[1], 3u);
    EXPECT_EQ(b->n_bytes, 144u * 6);
    EXPECT_EQ(b->offset % 64, 0u);
    EXPECT_EQ(std::vector<uint8_t>(f.tensor_data(*b), f.tensor_data(*b) + b->n_bytes), pattern_bytes(144 * 6, 2));
    const GgufTensorInfo* c = f.tensor("c");
    EXPECT_EQ(std::vector<uint8_t>(f.tensor_data(*c), f.tensor_data(*c) + 68), pattern_bytes(68, 3));
}

TEST(GgufWriter, RejectsWrongSizesAndDuplicates) {
    GgufWriter w;
    EXPECT_FALSE(w.add_tensor("x", TensorType::Q4_K, {100}, std::vector<uint8_t>(144)));  // not a multiple of 256
    EXPECT_FALSE(w.add_tensor("x", TensorType::F32, {4}, std::vector<uint8_t>(15)));
    EXPECT_TRUE(w.add_tensor("x", TensorType::F32, {4}, std::vector<uint8_t>(16)));
    EXPECT_FALSE(w.add_tensor("x", TensorType::F32, {4}, std::vector<uint8_t>(16)));
    EXPECT_FALSE(w.set_alignment(48));
}

// Split files: three parts written the way llama.cpp's gguf-split does (split.* keys, per-part
// tensor data) read back as one tensor index.
TEST(GgufSplit, PartsAreJoinedIntoOneIndex) {
    test::ScratchDir dir;
    for (uint16_t part = 0; part < 3; ++part) {
        GgufWriter w;
        if (part == 0) w.set_string("general.architecture", "llama");
        w.set_u16("split.no", part);
        w.set_u16("split.count", 3);
        w.set_i32("split.tensors.count", 3);
        ASSERT_TRUE(w.add_tensor("t" + std::to_string(part), TensorType::F32, {8}, pattern_bytes(32, static_cast<uint8_t>(part))));
        char name[64];
        std::snprintf(name, sizeof(name), "m-%05d-of-00003.gguf", part + 1);
        ASSERT_TRUE(w.write(dir.path(name)));
    }
    {  // closed before a part is removed: Windows deletes no file that is open or mapped
        auto f = GgufFile::open(dir.path("m-00001-of-00003.gguf"));
        ASSERT_TRUE(f) << f.status().message();
        EXPECT_EQ(f->file_count(), 3u);
        EXPECT_EQ(f->get_string("general.architecture", ""), "llama");
        ASSERT_EQ(f->tensors().size(), 3u);
        const GgufTensorInfo* t2 = f->tensor("t2");
        ASSERT_NE(t2, nullptr);
        EXPECT_EQ(t2->file_index, 2u);
        EXPECT_EQ(std::vector<uint8_t>(f->tensor_data(*t2), f->tensor_data(*t2) + 32), pattern_bytes(32, 2));
    }
    ASSERT_EQ(std::remove(dir.path("m-00003-of-00003.gguf").c_str()), 0);
    auto missing = GgufFile::open(dir.path("m-00001-of-00003.gguf"));
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.status().message().find("expected part 3 of 3"), std::string::npos) << missing.status().message();
}

TEST(GgufSplit, PathsFromAnyPartName) {
    auto p = gguf_split_paths("/m/x-00002-of-00004.gguf", 0);
    ASSERT_EQ(p.size(), 4u);
    EXPECT_EQ(p[0], "/m/x-00001-of-00004.gguf");
    EXPECT_EQ(p[3], "/m/x-00004-of-00004.gguf");
    EXPECT_EQ(gguf_split_paths("/m/plain.gguf", 0).size(), 1u);
}

// Every outside reference file must parse; they were written by llama.cpp's converter and ggml.
TEST(GgufReference, AllTestdataFilesParse) {
    std::vector<std::string> files;
    for (const char* folder : {"models", "quant", "vocab"}) {
        auto f = test::testdata_files(folder, ".gguf");
        files.insert(files.end(), f.begin(), f.end());
    }
    if (files.empty()) GTEST_SKIP() << "no test data under " << test::testdata_root();
    for (const auto& path : files) {
        auto f = GgufFile::open(path);
        ASSERT_TRUE(f) << path << ": " << f.status().message();
        EXPECT_GE(f->version(), 2u) << path;
        EXPECT_FALSE(f->metadata().empty()) << path;
    }
}

TEST(GgufReference, Qwen3MoeModelHasExpectedStructure) {
    std::string path = test::testdata_path("models/qwen3moe.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto f = GgufFile::open(path);
    ASSERT_TRUE(f) << f.status().message();
    EXPECT_EQ(f->get_string("general.architecture", ""), "qwen3moe");
    EXPECT_EQ(f->get_uint("qwen3moe.expert_count", 0), 16u);  // PROVENANCE: 16 experts, top-4
    EXPECT_EQ(f->get_uint("qwen3moe.expert_used_count", 0), 4u);
    uint64_t n_layers = f->get_uint("qwen3moe.block_count", 0);
    ASSERT_GT(n_layers, 0u);
    const GgufTensorInfo* gate = f->tensor("blk.0.ffn_gate_exps.weight");
    ASSERT_NE(gate, nullptr);
    EXPECT_EQ(gate->ne[2], 16u);
    EXPECT_EQ(gate->type, TensorType::F16);
    const GgufValue* tokens = f->find("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr);
    EXPECT_EQ(tokens->as_array().items.size(), 4096u);  // first 4096 tokens of the llama-spm vocab
}

}  // namespace
}  // namespace strata
