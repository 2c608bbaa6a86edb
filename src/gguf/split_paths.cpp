// Split models are named `<prefix>-00001-of-00003.gguf` (llama.cpp's gguf-split convention).
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "gguf/reader.h"

namespace strata {

std::vector<std::string> gguf_split_paths(const std::string& path, uint32_t count_hint) {
    static const std::regex pattern(R"(^(.*)-(\d{5})-of-(\d{5})\.gguf$)");
    std::smatch m;
    if (!std::regex_match(path, m, pattern)) return {path};
    uint32_t count = static_cast<uint32_t>(std::stoul(m[3].str()));
    if (count_hint != 0 && count_hint != count) return {path};
    if (count == 0) return {path};
    std::vector<std::string> out;
    for (uint32_t i = 1; i <= count; ++i) {
        char suffix[32];
        std::snprintf(suffix, sizeof(suffix), "-%05u-of-%05u.gguf", i, count);
        out.push_back(m[1].str() + suffix);
    }
    return out;
}

}  // namespace strata
