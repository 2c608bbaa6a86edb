#include "core/tagged_words.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace strata {
namespace {

// Round trips through the host-side pair: the word and the tag come back apart.
TEST(TaggedWords, PairsHoldTheWordAndTheTag) {
    const std::vector<float> values = {1.5f, -0.0f, 3.0e38f, -7.25f};
    std::vector<uint64_t> pairs(values.size(), 0);
    write_tagged_words(pairs.data(), values.data(), values.size(), 42);
    std::vector<float> got(values.size(), 0.0f);
    await_tagged_words(pairs.data(), pairs.size(), 42, got.data(), [] { return false; });
    for (size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ(pairs[i] >> 32, 42u);
        EXPECT_EQ(std::memcmp(&got[i], &values[i], sizeof(float)), 0) << i;  // -0.0f keeps its sign bit
    }
}

// A reader waits for the words of its own transfer: pairs still tagged by the last one (or
// cleared) are not taken, and words that arrive out of order, late, are each awaited.
TEST(TaggedWords, ReaderWaitsForEveryWordOfItsTransfer) {
    constexpr uint64_t n = 4096;
    std::vector<uint64_t> pairs(n, 0);
    std::vector<uint32_t> old_words(n, 7), new_words(n);
    for (uint64_t i = 0; i < n; ++i) new_words[i] = static_cast<uint32_t>(i * 2654435761u);
    write_tagged_words(pairs.data(), old_words.data(), n, 1);  // the last transfer's
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        // Backwards, the first word last: a reader that took the first for the whole would fail.
        for (uint64_t i = n; i-- > 0;) write_tagged_words(pairs.data() + i, new_words.data() + i, 1, 2);
    });
    std::vector<uint32_t> got(n, 0);
    await_tagged_words(pairs.data(), n, 2, got.data(), [] { return false; });
    writer.join();
    EXPECT_EQ(got, new_words);
}

// A writer that finished without writing every pair is a bug, reported rather than spun on.
TEST(TaggedWordsDeathTest, MissingWordsAfterTheWriterEndedAreReported) {
    std::vector<uint64_t> pairs(8, 0);
    const std::vector<uint32_t> words(8, 5);
    write_tagged_words(pairs.data(), words.data(), 7, 3);  // the last word never comes
    std::vector<uint32_t> got(8);
    EXPECT_DEATH(await_tagged_words(pairs.data(), pairs.size(), 3, got.data(), [] { return true; }),
                 "tagged words never reached the host");
}

}  // namespace
}  // namespace strata
