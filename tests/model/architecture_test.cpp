// The architecture table: every Arch value has exactly one row, names are unique and found again,
// and a model file's general.architecture selects its row (or is refused with the list).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gguf/reader.h"
#include "model/architecture.h"
#include "model/config.h"
#include "support/testdata.h"

namespace strata {
namespace {

TEST(Architectures, EveryRowIsFoundByIdAndName) {
    std::set<std::string_view> names;
    std::set<Arch> ids;
    for (const ArchitectureInfo& a : architectures()) {
        EXPECT_TRUE(names.insert(a.name).second) << a.name;
        EXPECT_TRUE(ids.insert(a.id).second) << a.name;
        EXPECT_EQ(&architecture(a.id), &a) << a.name;
        EXPECT_EQ(find_architecture(a.name), &a) << a.name;
    }
    // Arch values are dense from Llama to the last row's.
    EXPECT_EQ(ids.size(), static_cast<size_t>(Arch::Deepseek4) + 1);
    EXPECT_EQ(find_architecture("mamba"), nullptr);
    EXPECT_EQ(find_architecture(""), nullptr);
}

TEST(Architectures, NamesListForMessages) {
    const std::string all = architecture_names();
    for (const ArchitectureInfo& a : architectures()) EXPECT_NE(all.find(a.name), std::string::npos) << a.name;
    EXPECT_EQ(all.rfind("llama, ", 0), 0u) << all;
}

// The fixtures' general.architecture values, with the row's traits that the engine acts on.
TEST(Architectures, FixturesSelectTheirRows) {
    struct Case { const char* fixture; Arch arch; bool recurrent; };
    for (const Case& c : {Case{"llama", Arch::Llama, false}, Case{"qwen3", Arch::Qwen3, false}, Case{"qwen3moe", Arch::Qwen3Moe, false},
                          Case{"mixtral", Arch::Llama, false}, Case{"deepseek3", Arch::Deepseek2, false},
                          Case{"gptoss", Arch::GptOss, false}, Case{"qwen3next", Arch::Qwen3Next, true},
                          Case{"qwen35moe", Arch::Qwen35Moe, true}, Case{"project:qwen4exp", Arch::Qwen4Exp, true},
                          Case{"project:deepseek4", Arch::Deepseek4, true}}) {
        SCOPED_TRACE(c.fixture);
        auto file = GgufFile::open(test::model_fixture_stem(c.fixture) + ".gguf");
        ASSERT_TRUE(file) << file.status().message();
        auto cfg = ModelConfig::from_gguf(*file);
        ASSERT_TRUE(cfg) << cfg.status().message();
        EXPECT_EQ(cfg->arch, c.arch);
        EXPECT_EQ(architecture(cfg->arch).traits.recurrent_state, c.recurrent);
        // The DeltaNet hybrids' state is their recurrent layers'; deepseek4's is its compressors'.
        const bool compressors = cfg->arch == Arch::Deepseek4;
        EXPECT_EQ(architecture(cfg->arch).traits.recurrent_state, cfg->full_attention_interval > 0 || compressors);
    }
}

}  // namespace
}  // namespace strata
