#include "device/hip_sdk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>
#include <system_error>

namespace strata {
namespace {

// ROCm 7 names its runtime amdhip64_7.dll, 6.x amdhip64_6.dll, 5.x amdhip64.dll.
constexpr const char* kRuntimeNames[] = {"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"};

std::string normalized_root(std::string path) {
    std::replace(path.begin(), path.end(), '/', '\\');
    while (path.size() > 1 && path.back() == '\\') path.pop_back();
    return path;
}

// Windows paths are case-insensitive: "C:\Program Files" and "c:\program files" are one folder.
std::string identity_of(const std::string& root) {
    std::string key = root;
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return key;
}

// "HIP_PATH_62" -> "6.2", "HIP_PATH_57" -> "5.7", "HIP_PATH_610" -> "6.10": the installer writes
// the major version's single digit then the minor.
std::string version_of_variable(const std::string& name) {
    constexpr std::string_view prefix = "HIP_PATH_";
    if (name.size() <= prefix.size() + 1) return "";
    const std::string digits = name.substr(prefix.size());
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) return "";
    return digits.substr(0, 1) + "." + digits.substr(1);
}

// The last path component when it reads as a version ("6.2", "5.7.1").
std::string version_of_folder(const std::string& root) {
    const std::string name = root.substr(root.rfind('\\') + 1);
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name.front()))) return "";
    const bool ok = std::all_of(name.begin(), name.end(), [](char c) { return c == '.' || std::isdigit(static_cast<unsigned char>(c)); });
    return ok ? name : "";
}

std::vector<std::string> split_dots(const std::string& v) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= v.size()) {
        const size_t dot = v.find('.', start);
        parts.push_back(v.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return parts;
}

}  // namespace

bool newer_version(const std::string& a, const std::string& b) {
    if (b.empty()) return !a.empty();
    if (a.empty()) return false;
    const auto pa = split_dots(a), pb = split_dots(b);
    for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
        if (i >= pa.size()) return false;  // "6" is older than "6.0"
        if (i >= pb.size()) return true;
        long na = 0, nb = 0;
        const auto ra = std::from_chars(pa[i].data(), pa[i].data() + pa[i].size(), na);
        const auto rb = std::from_chars(pb[i].data(), pb[i].data() + pb[i].size(), nb);
        const bool numbers = ra.ec == std::errc() && rb.ec == std::errc() && ra.ptr == pa[i].data() + pa[i].size() &&
                             rb.ptr == pb[i].data() + pb[i].size();
        if (numbers && na != nb) return na > nb;
        if (!numbers && pa[i] != pb[i]) return pa[i] > pb[i];
    }
    return false;
}

HipSdkSearch find_hip_sdks(const HipSdkEnvironment& environment, const FileSystemView& fs) {
    struct Candidate {
        std::string root, version, found_by;
    };
    std::vector<Candidate> candidates;
    if (!environment.hip_path.empty()) {
        const std::string root = normalized_root(environment.hip_path);
        candidates.push_back({root, version_of_folder(root), "HIP_PATH"});
    }
    std::vector<Candidate> versioned;
    for (const auto& [name, value] : environment.versioned) {
        if (value.empty()) continue;
        versioned.push_back({normalized_root(value), version_of_variable(name), name});
    }
    std::stable_sort(versioned.begin(), versioned.end(), [](const Candidate& a, const Candidate& b) {
        if (a.version != b.version) return newer_version(a.version, b.version);
        return a.found_by < b.found_by;  // the environment's order is no order: make it one
    });
    candidates.insert(candidates.end(), versioned.begin(), versioned.end());
    if (!environment.program_files.empty()) {
        const std::string rocm = normalized_root(environment.program_files) + "\\AMD\\ROCm";
        std::vector<Candidate> installed;
        if (fs.is_directory(rocm)) {
            for (const std::string& name : fs.subdirectories(rocm)) installed.push_back({rocm + "\\" + name, version_of_folder(rocm + "\\" + name), "Program Files"});
        }
        std::stable_sort(installed.begin(), installed.end(), [](const Candidate& a, const Candidate& b) {
            if (a.version != b.version) return newer_version(a.version, b.version);
            return a.root < b.root;
        });
        candidates.insert(candidates.end(), installed.begin(), installed.end());
    }

    HipSdkSearch out;
    std::set<std::string> seen;
    for (Candidate& c : candidates) {
        if (!seen.insert(identity_of(c.root)).second) continue;
        const std::string where = c.found_by == "Program Files" ? c.root : fmt::format("{}={}", c.found_by, c.root);
        if (!fs.is_directory(c.root)) {
            out.skipped.push_back(fmt::format("{}: the folder does not exist", where));
            continue;
        }
        HipSdk sdk;
        sdk.root = c.root;
        sdk.version = c.version.empty() ? version_of_folder(c.root) : c.version;
        sdk.found_by = c.found_by;
        sdk.has_hipinfo = fs.is_file(c.root + "\\bin\\hipInfo.exe");
        for (const char* name : kRuntimeNames) {
            const std::string dll = c.root + "\\bin\\" + name;
            if (fs.is_file(dll)) sdk.runtime_libraries.push_back(dll);
        }
        if (!sdk.has_hipinfo && sdk.runtime_libraries.empty()) {
            out.skipped.push_back(fmt::format("{}: no bin\\hipInfo.exe or bin\\amdhip64*.dll in it", where));
            continue;
        }
        out.sdks.push_back(std::move(sdk));
    }
    return out;
}

std::vector<std::string> hip_runtime_library_candidates(const std::vector<HipSdk>& sdks) {
    std::vector<std::string> out(std::begin(kRuntimeNames), std::end(kRuntimeNames));
    for (const HipSdk& sdk : sdks) out.insert(out.end(), sdk.runtime_libraries.begin(), sdk.runtime_libraries.end());
    return out;
}

std::vector<std::string> hipinfo_candidates(const std::vector<HipSdk>& sdks) {
    std::vector<std::string> out;
    for (const HipSdk& sdk : sdks)
        if (sdk.has_hipinfo) out.push_back(sdk.root + "\\bin\\hipInfo.exe");
    out.push_back("hipInfo.exe");
    return out;
}

std::optional<HipSdkSearch> find_hip_sdks_on_this_machine([[maybe_unused]] const HipSdkEnvironment& environment) {
#ifdef _WIN32
    return find_hip_sdks(environment, real_file_system());
#else
    return std::nullopt;
#endif
}

RuntimeReport hip_sdk_report(const HipSdkSearch& search) {
    RuntimeReport r;
    r.name = "HIP SDK";
    r.loaded = !search.sdks.empty();
    std::string text;
    if (!search.sdks.empty()) r.version = search.sdks.front().version;  // the one used first
    for (const HipSdk& sdk : search.sdks) {
        text += fmt::format("{}{} ({}{})", text.empty() ? "" : "; then ", sdk.root, sdk.found_by, sdk.has_hipinfo ? "" : ", no hipInfo.exe");
    }
    if (text.empty()) text = "none found (HIP_PATH unset or stale, nothing under %ProgramFiles%\\AMD\\ROCm): AMD GPUs are listed from the registry only";
    for (const std::string& s : search.skipped) text += fmt::format("; skipped {}", s);
    r.status = text;
    return r;
}

FileSystemView real_file_system() {
    FileSystemView fs;
    fs.is_directory = [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::is_directory(path, ec);
    };
    fs.is_file = [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::is_regular_file(path, ec);
    };
    fs.subdirectories = [](const std::string& path) {
        std::vector<std::string> names;
        std::error_code ec;
        for (auto it = std::filesystem::directory_iterator(path, ec); !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
            std::error_code type_ec;
            if (it->is_directory(type_ec)) names.push_back(it->path().filename().string());
        }
        return names;
    };
    return fs;
}

}  // namespace strata
