// MappedFile::read_into_memory (--load memory): the same bytes as the mapping, on a 2 MiB boundary,
// with progress up to the whole file; and the errors of a missing file or a directory.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/file.h"
#include "core/mapped_file.h"
#include "gguf/reader.h"
#include "support/scratch.h"
#include "support/testdata.h"

namespace strata {
namespace {

TEST(MappedFileMemory, SameBytesAsTheMappingOnAHugePageBoundary) {
    test::ScratchDir dir;
    // Past one chunk of the reader (64 MiB) and not a whole number of pages.
    std::string text(static_cast<size_t>((uint64_t(65) << 20) + 12345), '\0');
    for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>((i * 131 + i / 4099) & 0xff);
    ASSERT_TRUE(write_string_to_file(dir.path("w.bin"), text));
    auto mapped = MappedFile::map(dir.path("w.bin"));
    ASSERT_TRUE(mapped);
    uint64_t last_done = 0, calls = 0;
    auto read = MappedFile::read_into_memory(dir.path("w.bin"), [&](uint64_t done, uint64_t total) {
        EXPECT_GT(done, last_done);
        EXPECT_EQ(total, text.size());
        last_done = done, ++calls;
    });
    ASSERT_TRUE(read) << read.status().message();
    ASSERT_EQ(read->size(), mapped->size());
    EXPECT_EQ(std::memcmp(read->data(), mapped->data(), text.size()), 0);
    EXPECT_EQ(last_done, text.size());
    EXPECT_GE(calls, 2u);
#if !defined(_WIN32)
    EXPECT_EQ(reinterpret_cast<uintptr_t>(read->data()) % (uintptr_t(2) << 20), 0u);
#endif
    MappedFile moved = std::move(*read);  // the region follows the object
    EXPECT_EQ(std::memcmp(moved.data(), text.data(), text.size()), 0);
}

TEST(MappedFileMemory, ErrorsNameTheProblem) {
    auto missing = MappedFile::read_into_memory("/nonexistent/strata/model.gguf");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.status().message().find("/nonexistent/strata/model.gguf"), std::string::npos);
    test::ScratchDir dir;
    auto directory = MappedFile::read_into_memory(dir.root());
    ASSERT_FALSE(directory);
    EXPECT_NE(directory.status().message().find("expected a regular file"), std::string::npos);
}

// A model opened with GgufLoad::Memory has the same tensors, byte for byte, as the mapped one.
TEST(MappedFileMemory, GgufOpenedIntoMemoryHasTheSameTensors) {
    const std::string path = test::testdata_path("models/qwen3moe.gguf");
    STRATA_SKIP_IF_MISSING(path);
    auto mapped = GgufFile::open(path);
    auto loaded = GgufFile::open(path, {}, GgufLoad::Memory);
    ASSERT_TRUE(mapped && loaded);
    ASSERT_EQ(mapped->tensors().size(), loaded->tensors().size());
    for (size_t i = 0; i < mapped->tensors().size(); ++i) {
        const GgufTensorInfo& a = mapped->tensors()[i];
        const GgufTensorInfo& b = loaded->tensors()[i];
        ASSERT_EQ(a.name, b.name);
        ASSERT_EQ(a.n_bytes, b.n_bytes);
        EXPECT_EQ(std::memcmp(mapped->tensor_data(a), loaded->tensor_data(b), a.n_bytes), 0) << a.name;
    }
}

}  // namespace
}  // namespace strata
