#include "support/testdata.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "core/file.h"

namespace strata::test {

std::string testdata_root() {
    if (const char* env = std::getenv("STRATA_TESTDATA"); env && *env) return env;
    return STRATA_DEFAULT_TESTDATA;
}

std::string testdata_path(const std::string& relative) { return testdata_root() + "/" + relative; }

std::vector<std::string> testdata_files(const std::string& folder, const std::string& suffix) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(testdata_path(folder), ec)) {
        std::string name = entry.path().filename().string();
        if (entry.is_regular_file() && name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            out.push_back(entry.path().string());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> quant_vector_files() {
    std::vector<std::string> out = testdata_files("quant", ".gguf");
    const std::vector<std::string> next = testdata_files("quant-next", ".gguf");
    out.insert(out.end(), next.begin(), next.end());
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
        return std::filesystem::path(a).filename() < std::filesystem::path(b).filename();
    });
    return out;
}

std::string quant_vector_path(const std::string& type_name) {
    const std::string next = testdata_path("quant-next/" + type_name + ".gguf");
    return file_exists(next) ? next : testdata_path("quant/" + type_name + ".gguf");
}

std::string project_root() {
    // A test binary run away from its build's checkout (a bundle on another machine) is told
    // where the checkout is.
    if (const char* env = std::getenv("STRATA_SOURCE_DIR"); env && *env) return env;
    return STRATA_SOURCE_DIR;
}

std::string model_fixture_stem(const std::string& name) {
    const std::string project = "project:";
    if (name.rfind(project, 0) == 0) return project_root() + "/tests/model/data/" + name.substr(project.size());
    return testdata_path("models/" + name);
}

std::string model_fixture_label(const std::string& name) {
    std::string label = name;
    for (char& ch : label) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    return label;
}

}  // namespace strata::test
