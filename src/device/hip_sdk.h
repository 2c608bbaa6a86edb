#pragma once
// Where AMD's HIP SDK lies on a Windows machine, and so which hipInfo.exe lists the AMD GPUs and
// which amdhip64 DLL the device listing loads. The search is a pure function of the environment
// variables and of a view of the file system, so recorded machines test it on any platform.
//
// The order, and why:
//   1. HIP_PATH: the user's choice (the SDK installer also points it at the SDK it installed last).
//   2. HIP_PATH_57, HIP_PATH_62, ...: the installer writes one per SDK it installs; newest first.
//   3. %ProgramFiles%\AMD\ROCm\<version>: SDKs whose variables are gone (a shell opened before the
//      install, a profile reset); newest first, "6.10" above "6.4".
// A root named twice (case, slashes, a trailing separator) counts once; a root that does not exist
// or holds neither bin\hipInfo.exe nor a bin\amdhip64*.dll is skipped, and the skip is reported
// (a stale HIP_PATH is the common case after an SDK was uninstalled).
//
//   HipSdkSearch found = find_hip_sdks(environment, real_file_system());
//   DynamicLibrary::open(hip_runtime_library_candidates(found.sdks));
//   for (const std::string& exe : hipinfo_candidates(found.sdks)) ...

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device/runtime_probe.h"

namespace strata {

struct HipSdkEnvironment {
    std::string hip_path;                                      // HIP_PATH, empty when unset
    std::vector<std::pair<std::string, std::string>> versioned;  // {"HIP_PATH_62", "C:\...\6.2\"}, any order
    std::string program_files;                                 // %ProgramFiles%, empty when unset
};

struct HipSdk {
    std::string root;      // "C:\Program Files\AMD\ROCm\6.2" (backslashes, no trailing separator)
    std::string version;   // "6.2"; from the variable's suffix or the folder's name; empty when neither says
    std::string found_by;  // "HIP_PATH", "HIP_PATH_62" or "Program Files"
    std::vector<std::string> runtime_libraries;  // full paths of the bin\amdhip64*.dll it holds, newest name first
    bool has_hipinfo = false;
};

struct HipSdkSearch {
    std::vector<HipSdk> sdks;           // in search order
    std::vector<std::string> skipped;   // "HIP_PATH=D:\ROCm\5.7: the folder does not exist"
};

// The file system as the search sees it; paths use backslashes.
struct FileSystemView {
    std::function<bool(const std::string& path)> is_directory;
    std::function<bool(const std::string& path)> is_file;
    std::function<std::vector<std::string>(const std::string& path)> subdirectories;  // names only
};
FileSystemView real_file_system();

HipSdkSearch find_hip_sdks(const HipSdkEnvironment& environment, const FileSystemView& fs);
// The search on this machine's file system on Windows; elsewhere none is made (ROCm on Linux has no
// SDK folders to choose from: the loader's path finds libamdhip64.so).
std::optional<HipSdkSearch> find_hip_sdks_on_this_machine(const HipSdkEnvironment& environment);
// The search as `strata devices` reports it beside the runtimes ("HIP SDK 6.2: C:\....2 (HIP_PATH)").
RuntimeReport hip_sdk_report(const HipSdkSearch& search);

// The HIP runtime library to load: first by bare name, which Windows resolves as the engine's own
// import of the DLL will (the program's folder, System32 where the display driver installs it, then
// PATH), so the listing reports the runtime the engine will run on; then each SDK's copy in order.
std::vector<std::string> hip_runtime_library_candidates(const std::vector<HipSdk>& sdks);
// hipInfo.exe: each SDK's bin\hipInfo.exe in order, then the bare name (PATH).
std::vector<std::string> hipinfo_candidates(const std::vector<HipSdk>& sdks);

// "6.10" > "6.4" > "6" > "": numeric, component by component (a non-number compares as text).
bool newer_version(const std::string& a, const std::string& b);

}  // namespace strata
