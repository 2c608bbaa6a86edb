#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "core/file.h"
#include "core/mapped_file.h"
#include "support/scratch.h"

namespace strata {
namespace {

TEST(File, MissingFileNamesThePath) {
    auto r = File::open_read("/nonexistent/strata/model.gguf");
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("/nonexistent/strata/model.gguf"), std::string::npos);
}

TEST(File, ReadPastEndIsAnErrorNotAShortRead) {
    test::ScratchDir dir;
    ASSERT_TRUE(write_string_to_file(dir.path("a"), "hello"));
    auto f = File::open_read(dir.path("a"));
    ASSERT_TRUE(f);
    char buf[8];
    EXPECT_TRUE(f->read_at(1, buf, 4));
    EXPECT_EQ(std::string(buf, 4), "ello");
    auto s = f->read_at(3, buf, 4);
    EXPECT_FALSE(s);
    EXPECT_NE(s.message().find("expected a range inside the file's 5 bytes"), std::string::npos) << s.message();
}

// Offsets beyond 4 GiB must not be truncated to 32 bits. A sparse file costs no disk space.
TEST(File, OffsetsBeyondFourGigabytes) {
    test::ScratchDir dir;
    const uint64_t far = (uint64_t(5) << 30) + 12345;
    {
        std::ofstream out(dir.path("sparse"), std::ios::binary);
        out.seekp(static_cast<std::streamoff>(far));
        out.write("FAR!", 4);
    }
    auto f = File::open_read(dir.path("sparse"));
    ASSERT_TRUE(f);
    EXPECT_EQ(f->size(), far + 4);
    char buf[4];
    ASSERT_TRUE(f->read_at(far, buf, 4));
    EXPECT_EQ(std::string(buf, 4), "FAR!");
    ASSERT_TRUE(f->read_at(far & 0xffffffffu, buf, 4));  // what a 32-bit truncation would read
    EXPECT_EQ(std::string(buf, 4), std::string(4, '\0'));
    // Several threads at once, each alternating between past 4 GiB and near the start of one handle
    // (a shared file pointer, as ReadFile without an offset has on Windows, would mix them up).
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 100; ++i) {
                char got[4];
                const bool high = (i + t) % 2 == 0;
                if (!f->read_at(high ? far : uint64_t(t) * 4096, got, 4) ||
                    std::string(got, 4) != (high ? std::string("FAR!") : std::string(4, '\0'))) {
                    ++wrong[t];
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int w : wrong) EXPECT_EQ(w, 0);

    auto m = MappedFile::map(dir.path("sparse"));
    ASSERT_TRUE(m);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->data() + far), 4), "FAR!");
}

TEST(File, ConcurrentPositionalReadsDoNotInterfere) {
    test::ScratchDir dir;
    std::string data(1 << 20, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 251);
    ASSERT_TRUE(write_string_to_file(dir.path("d"), data));
    auto f = File::open_read(dir.path("d"));
    ASSERT_TRUE(f);
    std::vector<std::thread> threads;
    std::vector<int> mismatches(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            char buf[4096];
            for (int i = 0; i < 200; ++i) {
                uint64_t off = static_cast<uint64_t>((t * 7919 + i * 104729) % (data.size() - sizeof(buf)));
                if (!f->read_at(off, buf, sizeof(buf)) || std::memcmp(buf, data.data() + off, sizeof(buf)) != 0) {
                    ++mismatches[t];
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(File, DirectoryIsRejected) {
    test::ScratchDir dir;
    auto r = File::open_read(dir.root());
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("directory"), std::string::npos);
}

}  // namespace
}  // namespace strata
