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

// ggml's quantization vectors: quant/ holds the first 24 types, quant-next/ the newer ones
// (NVFP4, Q1_0, Q2_0), same layout (PROVENANCE.md). Every file of both, sorted by type name...
std::vector<std::string> quant_vector_files();
// ...and the one of a type ("Q4_K"), wherever it is (the quant/ path when neither has it).
std::string quant_vector_path(const std::string& type_name);

// The checkout's root: $STRATA_SOURCE_DIR when set (binaries run elsewhere), else the build's.
std::string project_root();
// A model fixture's path without ".gguf" / ".ref.gguf": "llama" is models/llama of the outside
// data; "project:qwen4exp" is one this project made (tests/model/data; tools/fixtures/PROVENANCE.md).
std::string model_fixture_stem(const std::string& name);
// The name as a test label ("project:qwen4exp" → "project_qwen4exp").
std::string model_fixture_label(const std::string& name);

}  // namespace strata::test

#define STRATA_SKIP_IF_MISSING(path)                                              \
    do {                                                                          \
        if (!::strata::file_exists(path)) GTEST_SKIP() << "test data missing: " << (path); \
    } while (0)
