#pragma once
// Where the outside reference data lives: $STRATA_TESTDATA when set, else ../shared/testdata
// beside the checkout. Tests that need a file call testdata_path("quant/Q4_K.gguf"); when the
// data set is missing they skip with a message instead of failing silently.
//
//   std::string p = testdata_path("quant/Q4_K.gguf");
//   STRATA_SKIP_IF_MISSING(p);

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/file.h"

namespace strata::test {

std::string testdata_root();
std::string testdata_path(const std::string& relative);
// Files directly in testdata_root()/<folder> whose names end with `suffix`, sorted.
std::vector<std::string> testdata_files(const std::string& folder, const std::string& suffix);

}  // namespace strata::test

#define STRATA_SKIP_IF_MISSING(path)                                              \
    do {                                                                          \
        if (!::strata::file_exists(path)) GTEST_SKIP() << "test data missing: " << (path); \
    } while (0)
