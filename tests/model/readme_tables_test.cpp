// The README's tables of supported architectures and weight types must say what the engine does.
// They are parsed from the README itself (rows of "| name | ... |") and compared with the
// architecture list, the quant traits table, the SIMD kernel tables and (in GPU builds) the GPU
// backend's own answers.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "core/file.h"
#include "model/config.h"
#include "quant/cpu/dot_kernels.h"
#include "quant/traits.h"
#if STRATA_HAS_GPU
#include "model/gpu/gpu_model.h"
#include "backend/gpu/gpu_ops.h"
#endif

namespace strata {
namespace {

// Rows of the first table after `heading`: cells trimmed.
std::vector<std::vector<std::string>> table_after(const std::string& text, const std::string& heading) {
    std::vector<std::vector<std::string>> rows;
    size_t at = text.find(heading);
    if (at == std::string::npos) return rows;
    std::istringstream in(text.substr(at));
    std::string line;
    bool in_table = false;
    while (std::getline(in, line)) {
        if (line.rfind("|", 0) != 0) {
            if (in_table) break;
            continue;
        }
        in_table = true;
        if (line.find("---") != std::string::npos) continue;
        std::vector<std::string> cells;
        std::stringstream cs(line.substr(1));
        std::string cell;
        while (std::getline(cs, cell, '|')) {
            size_t b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
            cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
        }
        rows.push_back(cells);
    }
    if (!rows.empty()) rows.erase(rows.begin());  // header
    return rows;
}

std::string readme() {
    auto text = read_file_to_string(std::string(STRATA_SOURCE_DIR) + "/README.md");
    EXPECT_TRUE(text) << text.status().message();
    return text ? *text : std::string();
}

TEST(ReadmeTables, ArchitecturesAreTheEnginesOwn) {
    auto rows = table_after(readme(), "## Supported architectures");
    std::set<std::string> listed;
    for (const auto& r : rows) {
        ASSERT_GE(r.size(), 3u);
        listed.insert(r[0]);
        EXPECT_EQ(r[2], "yes") << r[0] << ": every listed architecture runs on the CPU";
        const ArchitectureInfo* a = find_architecture(r[0]);
        ASSERT_NE(a, nullptr) << r[0];
        EXPECT_EQ(r[3], a->traits.gpu_forward ? "yes" : "no") << r[0];
    }
    std::set<std::string> engine;
    for (const ArchitectureInfo& a : architectures()) engine.insert(std::string(a.name));
    EXPECT_EQ(listed, engine);
}

TEST(ReadmeTables, WeightTypesAndSimdLevelsAreTrue) {
    auto rows = table_after(readme(), "## Supported weight types");
    std::set<std::string> listed;
    for (const auto& r : rows) {
        ASSERT_GE(r.size(), 3u);
        auto type = tensor_type_from_name(r[0]);
        ASSERT_TRUE(type.has_value()) << r[0];
        listed.insert(r[0]);
        const QuantTraits* q = find_quant_traits(*type);
        EXPECT_TRUE(q && q->dot) << r[0] << " is listed but has no CPU dot product";
        std::string simd;
        for (SimdLevel level : {SimdLevel::Avx2, SimdLevel::Avx512}) {
            if (cpu_dot_kernel_exact(*type, level)) simd += (simd.empty() ? "" : ", ") + std::string(simd_level_name(level));
        }
        EXPECT_EQ(r[2], simd.empty() ? "—" : simd) << r[0];
#if STRATA_HAS_GPU
        EXPECT_EQ(r[3], gpu::gpu_supports_type(*type) ? "yes" : "no") << r[0];
#endif
    }
    // Every type with a CPU dot product is listed.
    size_t count = 0;
    const TensorTypeInfo* all = all_tensor_types(&count);
    for (size_t i = 0; i < count; ++i) {
        const QuantTraits* q = find_quant_traits(all[i].type);
        if (q && q->dot) {
            EXPECT_TRUE(listed.count(std::string(all[i].name))) << all[i].name << " missing from the README";
        }
    }
}

}  // namespace
}  // namespace strata
