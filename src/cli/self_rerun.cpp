#include "cli/self_rerun.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/command.h"

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace strata::cli {

bool self_visibility_disabled() {
    const char* v = std::getenv("STRATA_NO_SELF_VISIBILITY");
    return v && std::strcmp(v, "0") != 0 && *v != '\0';
}

void rerun_with_visibility(const SelfVisibility& visibility) {
#if defined(_WIN32)
    static_cast<void>(visibility);  // no exec that keeps the console; the runtime sees every card
#else
    const std::vector<std::string>& args = process_arguments();
    if (args.empty()) return;
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (setenv(visibility.variable.c_str(), visibility.value.c_str(), 1) != 0 ||
        setenv(kSelfVisibilityMarker, visibility.marker().c_str(), 1) != 0) {
        fmt::print(stderr, "strata: could not set {} for itself ({}); every card stays visible\n", visibility.variable,
                   std::strerror(errno));
        return;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    execv("/proc/self/exe", argv.data());
    // Still here: exec failed. Undo, so what runs next sees the cards as before.
    const int error = errno;
    unsetenv(visibility.variable.c_str());
    unsetenv(kSelfVisibilityMarker);
    fmt::print(stderr, "strata: could not re-run itself with {}={} ({}); every card stays visible\n", visibility.variable,
               visibility.value, std::strerror(error));
#endif
}

}  // namespace strata::cli
