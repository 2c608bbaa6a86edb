#include "cli/self_rerun.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "cli/command.h"

#if defined(_WIN32)
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace strata::cli {

#if defined(_WIN32)
namespace {
// Windows has no exec: the same executable runs again as a child on this console (the handles
// are inherited, so its output and input are the user's), with the variables set in the
// environment it inherits; this process waits and exits with the child's code. Ctrl+C reaches
// every process of the console, so the parent ignores it while the child (a server shutting down
// cleanly) handles it. False, after saying why, when the child cannot be started.
bool rerun_as_child(const SelfVisibility& visibility) {
    wchar_t exe[32768];
    const DWORD n = GetModuleFileNameW(nullptr, exe, static_cast<DWORD>(std::size(exe)));
    if (n == 0 || n >= std::size(exe)) {
        fmt::print(stderr, "strata: could not find its own executable (error {}); every card stays visible\n", GetLastError());
        return false;
    }
    if (!SetEnvironmentVariableA(visibility.variable.c_str(), visibility.value.c_str()) ||
        !SetEnvironmentVariableA(kSelfVisibilityMarker, visibility.marker().c_str())) {
        fmt::print(stderr, "strata: could not set {} for itself (error {}); every card stays visible\n", visibility.variable,
                   GetLastError());
        return false;
    }
    std::wstring command_line = GetCommandLineW();  // as typed, quoting included; CreateProcessW may write to it
    STARTUPINFOW startup{};
    startup.cb = sizeof(startup);
    PROCESS_INFORMATION child{};
    std::fflush(stdout);
    std::fflush(stderr);
    if (!CreateProcessW(exe, command_line.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &startup, &child)) {
        const DWORD error = GetLastError();
        SetEnvironmentVariableA(visibility.variable.c_str(), nullptr);
        SetEnvironmentVariableA(kSelfVisibilityMarker, nullptr);
        fmt::print(stderr, "strata: could not re-run itself with {}={} (error {}); every card stays visible\n",
                   visibility.variable, visibility.value, error);
        return false;
    }
    SetConsoleCtrlHandler(nullptr, TRUE);
    WaitForSingleObject(child.hProcess, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(child.hProcess, &code);
    CloseHandle(child.hThread);
    CloseHandle(child.hProcess);
    ExitProcess(code);
}
}  // namespace
#endif

void rerun_with_visibility(const SelfVisibility& visibility) {
#if defined(_WIN32)
    rerun_as_child(visibility);
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
