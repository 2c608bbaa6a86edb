#include "device/gpu_arch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace strata {
namespace {

// Targets from LLVM's AMDGPU processor table; integrated_only marks targets that ship only in
// APUs, which is how an iGPU is recognised when the listing itself does not say.
constexpr AmdArchInfo kAmdArchs[] = {
    {"gfx900", "GCN5 (Vega 10)", 64, false},  {"gfx902", "GCN5 (Raven APU)", 64, true},
    {"gfx906", "GCN5 (Vega 20)", 64, false},  {"gfx908", "CDNA1", 64, false},
    {"gfx90a", "CDNA2", 64, false},           {"gfx90c", "GCN5 (Renoir APU)", 64, true},
    {"gfx942", "CDNA3", 64, false},           {"gfx1010", "RDNA1", 32, false},
    {"gfx1012", "RDNA1", 32, false},          {"gfx1030", "RDNA2", 32, false},
    {"gfx1031", "RDNA2", 32, false},          {"gfx1032", "RDNA2", 32, false},
    {"gfx1033", "RDNA2 (Van Gogh APU)", 32, true},
    {"gfx1034", "RDNA2", 32, false},          {"gfx1035", "RDNA2 (Rembrandt APU)", 32, true},
    {"gfx1036", "RDNA2 (Raphael iGPU)", 32, true},
    {"gfx1100", "RDNA3", 32, false},          {"gfx1101", "RDNA3", 32, false},
    {"gfx1102", "RDNA3", 32, false},          {"gfx1103", "RDNA3 (Phoenix APU)", 32, true},
    {"gfx1150", "RDNA3.5 (Strix Point APU)", 32, true},
    {"gfx1151", "RDNA3.5 (Strix Halo APU)", 32, true},
    {"gfx1152", "RDNA3.5 (Krackan APU)", 32, true},
    {"gfx1200", "RDNA4", 32, false},          {"gfx1201", "RDNA4", 32, false},
};

// Product names as whole-word sequences, longest first within a family so the most specific
// entry is tried first (the arch is the same either way; the order only keeps the table honest).
struct NameToArch {
    const char* words;
    const char* arch;
};
constexpr NameToArch kAmdProductNames[] = {
    // RDNA4
    {"rx 9070 xt", "gfx1201"}, {"rx 9070 gre", "gfx1201"}, {"rx 9070", "gfx1201"},
    {"ai pro r9700", "gfx1201"}, {"rx 9060 xt", "gfx1200"}, {"rx 9060", "gfx1200"},
    // RDNA3 and RDNA3.5 (APU GPUs are named by their own model numbers)
    {"rx 7900 xtx", "gfx1100"}, {"rx 7900 xt", "gfx1100"}, {"rx 7900 gre", "gfx1100"},
    {"pro w7900", "gfx1100"}, {"pro w7800", "gfx1100"}, {"rx 7800 xt", "gfx1101"},
    {"rx 7700 xt", "gfx1101"}, {"rx 7700", "gfx1101"}, {"pro w7700", "gfx1101"},
    {"rx 7600 xt", "gfx1102"}, {"rx 7600", "gfx1102"}, {"pro w7600", "gfx1102"},
    {"pro w7500", "gfx1102"}, {"780m", "gfx1103"}, {"760m", "gfx1103"}, {"740m", "gfx1103"},
    {"890m", "gfx1150"}, {"880m", "gfx1150"}, {"8060s", "gfx1151"}, {"8050s", "gfx1151"},
    {"8040s", "gfx1151"},
    // RDNA2
    {"rx 6950 xt", "gfx1030"}, {"rx 6900 xt", "gfx1030"}, {"rx 6800 xt", "gfx1030"},
    {"rx 6800", "gfx1030"}, {"pro w6800", "gfx1030"}, {"pro v620", "gfx1030"},
    {"rx 6750 xt", "gfx1031"}, {"rx 6700 xt", "gfx1031"}, {"rx 6700", "gfx1031"},
    {"rx 6650 xt", "gfx1032"}, {"rx 6600 xt", "gfx1032"}, {"rx 6600", "gfx1032"},
    {"pro w6600", "gfx1032"}, {"rx 6500 xt", "gfx1034"}, {"rx 6400", "gfx1034"},
    // GCN5 Vega 20
    {"mi50", "gfx906"}, {"mi60", "gfx906"}, {"radeon vii", "gfx906"}, {"pro vii", "gfx906"},
};

// CUDA archs nvcc 13 still compiles for (see AMD_BUILD.md) and the AMD targets CI builds.
constexpr int kOldestBuildableSm = 75;
constexpr const char* kBuildableGfx[] = {"gfx906", "gfx1030", "gfx1100", "gfx1151", "gfx1200", "gfx1201"};

std::vector<std::string> lower_words(std::string_view text) {
    std::vector<std::string> words;
    std::string cur;
    for (char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c))) {
            cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!cur.empty()) {
            words.push_back(std::move(cur));
            cur.clear();
        }
    }
    if (!cur.empty()) words.push_back(std::move(cur));
    return words;
}

bool contains_word_sequence(const std::vector<std::string>& hay, const std::vector<std::string>& needle) {
    if (needle.empty() || needle.size() > hay.size()) return false;
    for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
        if (std::equal(needle.begin(), needle.end(), hay.begin() + static_cast<std::ptrdiff_t>(i))) return true;
    }
    return false;
}

// "90" -> 90, "sm_86" -> 86, "sm_90a" -> 90; -1 if no number.
int leading_number(std::string_view s) {
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end != s.data() ? v : -1;
}

}  // namespace

const AmdArchInfo* find_amd_arch(std::string_view arch) {
    std::string base = strip_arch_features(arch);
    for (const auto& a : kAmdArchs) {
        if (base == a.arch) return &a;
    }
    return nullptr;
}

std::string gfx_arch_from_kfd_version(uint32_t version) {
    if (version == 0) return "";
    uint32_t major = version / 10000, minor = (version / 100) % 100, stepping = version % 100;
    return fmt::format("gfx{}{}{:x}", major, minor, stepping);
}

std::string strip_arch_features(std::string_view arch) {
    size_t colon = arch.find(':');
    std::string_view base = arch.substr(0, colon);
    while (!base.empty() && std::isspace(static_cast<unsigned char>(base.back()))) base.remove_suffix(1);
    while (!base.empty() && std::isspace(static_cast<unsigned char>(base.front()))) base.remove_prefix(1);
    return std::string(base);
}

std::string amd_arch_from_product_name(std::string_view name) {
    auto words = lower_words(name);
    for (const auto& entry : kAmdProductNames) {
        if (contains_word_sequence(words, lower_words(entry.words))) return entry.arch;
    }
    return "";
}

std::string cuda_arch_name(int major, int minor) { return fmt::format("sm_{}", major * 10 + minor); }

ArchSet ArchSet::parse(std::string_view list) {
    ArchSet set;
    size_t start = 0;
    while (start <= list.size()) {
        size_t end = list.find_first_of(";, ", start);
        if (end == std::string_view::npos) end = list.size();
        std::string_view item = list.substr(start, end - start);
        start = end + 1;
        if (item.empty()) continue;
        if (item.starts_with("gfx")) {
            set.gfx_.push_back(strip_arch_features(item));
        } else if (item.starts_with("compute_")) {
            if (int v = leading_number(item.substr(8)); v > 0) set.ptx_.push_back(v);
        } else if (item.starts_with("sm_")) {
            if (int v = leading_number(item.substr(3)); v > 0) set.sm_.push_back(v);
        } else if (int v = leading_number(item); v > 0) {
            // CMake's CUDA_ARCHITECTURES: "90" builds both cubin and PTX, "-real" only the cubin.
            if (!item.ends_with("-virtual")) set.sm_.push_back(v);
            if (!item.ends_with("-real")) set.ptx_.push_back(v);
        }
    }
    return set;
}

ArchSet ArchSet::all_buildable() {
    ArchSet set;
    set.all_nvidia_from_ = kOldestBuildableSm;
    for (const char* gfx : kBuildableGfx) set.gfx_.emplace_back(gfx);
    return set;
}

bool ArchSet::empty() const { return sm_.empty() && ptx_.empty() && gfx_.empty() && all_nvidia_from_ < 0; }

bool ArchSet::contains(std::string_view device_arch) const {
    if (device_arch.starts_with("gfx")) {
        std::string base = strip_arch_features(device_arch);
        return std::find(gfx_.begin(), gfx_.end(), base) != gfx_.end();
    }
    if (!device_arch.starts_with("sm_")) return false;
    int dev = leading_number(device_arch.substr(3));
    if (dev <= 0) return false;
    if (all_nvidia_from_ >= 0 && dev >= all_nvidia_from_) return true;
    for (int sm : sm_) {
        if (sm / 10 == dev / 10 && sm % 10 <= dev % 10) return true;
    }
    for (int ptx : ptx_) {
        if (ptx <= dev) return true;
    }
    return false;
}

std::string ArchSet::to_string() const {
    std::vector<std::string> parts;
    if (all_nvidia_from_ >= 0) parts.push_back(fmt::format("sm_{}+", all_nvidia_from_));
    for (int sm : sm_) parts.push_back(fmt::format("sm_{}", sm));
    for (int ptx : ptx_) parts.push_back(fmt::format("compute_{}", ptx));
    for (const auto& g : gfx_) parts.push_back(g);
    return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace strata
