// Finding the built-in model from the running executable's own path (see builtin_model.h).
#include "cli/builtin_model.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#elif defined(__APPLE__)
#include <mach-o/dyld.h>
#endif

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

// The running executable, symbolic links resolved (a `strata` linked into ~/bin still finds the
// checkout it was built in). Empty when the platform cannot say.
fs::path executable_path() {
    std::error_code ec;
#if defined(_WIN32)
    std::wstring buf(32768, L'\0');
    const DWORD n = GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0 || n >= buf.size()) return {};
    buf.resize(n);
    fs::path p(buf);
#elif defined(__APPLE__)
    uint32_t size = 0;
    _NSGetExecutablePath(nullptr, &size);
    std::string buf(size, '\0');
    if (_NSGetExecutablePath(buf.data(), &size) != 0) return {};
    fs::path p(buf.c_str());
#else
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
#endif
    fs::path resolved = fs::weakly_canonical(p, ec);
    return ec ? p : resolved;
}

// Where to look, nearest first: for each folder above the executable (a build tree puts it at
// <checkout>/<build>/bin, an install at <prefix>/bin), its models/ and share/strata/models/.
std::vector<fs::path> candidates() {
    std::vector<fs::path> out;
    fs::path dir = executable_path().parent_path();
    for (int up = 0; up < 4 && !dir.empty(); ++up) {
        out.push_back(dir / "models" / kBuiltinModelFile);
        out.push_back(dir / "share" / "strata" / "models" / kBuiltinModelFile);
        if (dir == dir.parent_path()) break;
        dir = dir.parent_path();
    }
    return out;
}

}  // namespace

Result<std::string> find_builtin_model() {
    const std::vector<fs::path> looked = candidates();
    for (const fs::path& p : looked) {
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    std::string where;
    for (const fs::path& p : looked) where += (where.empty() ? "" : ", ") + p.string();
    return Status::error("no model given and the built-in model is not found: expected {} in one of: {} — give a model with -m FILE.gguf",
                         kBuiltinModelFile, where.empty() ? "(the executable's path is unknown)" : where);
}

Result<std::string> model_or_builtin(const std::string& given, const std::string& command) {
    if (!given.empty()) return given;
    STRATA_ASSIGN_OR_RETURN(std::string path, find_builtin_model());
    fmt::print(stderr, "strata {}: no -m given: using the built-in model {}\n", command, path);
    return path;
}

}  // namespace strata::cli
