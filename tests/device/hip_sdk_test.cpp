// Finding the HIP SDK on Windows: recorded machines (the variables AMD's SDK installer sets and the
// files under its install folder) fed through a file system view, so the order is checked anywhere.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "device/hip_sdk.h"

namespace strata {
namespace {

// A recorded file system: the files it holds; every folder above a file exists. Lookups ignore
// case, as Windows does.
class RecordedDisk {
public:
    explicit RecordedDisk(std::vector<std::string> files) {
        for (std::string f : files) {
            f = lower(f);
            files_.insert(f);
            for (size_t cut = f.rfind('\\'); cut != std::string::npos && cut > 0; cut = f.rfind('\\', cut - 1)) {
                folders_.insert(f.substr(0, cut));
            }
        }
    }
    FileSystemView view() const {
        FileSystemView fs;
        fs.is_file = [this](const std::string& p) { return files_.count(lower(p)) > 0; };
        fs.is_directory = [this](const std::string& p) { return folders_.count(lower(p)) > 0; };
        fs.subdirectories = [this](const std::string& p) {
            std::vector<std::string> names;
            const std::string prefix = lower(p) + "\\";
            for (const std::string& f : folders_) {
                if (f.compare(0, prefix.size(), prefix) == 0 && f.find('\\', prefix.size()) == std::string::npos)
                    names.push_back(f.substr(prefix.size()));
            }
            return names;
        };
        return fs;
    }

private:
    static std::string lower(std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    }
    std::set<std::string> files_, folders_;
};

std::vector<std::string> sdk_files(const std::string& root, const std::string& dll) {
    return {root + "\\bin\\hipInfo.exe", root + "\\bin\\" + dll, root + "\\bin\\clang.exe"};
}

std::vector<std::string> joined(std::initializer_list<std::vector<std::string>> parts) {
    std::vector<std::string> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

const std::string kRocm = "C:\\Program Files\\AMD\\ROCm";

TEST(HipSdk, InstallerVariablesComeFirstAndEachSdkOnce) {
    // Two SDKs installed: the installer set HIP_PATH to the last one (6.2) and one HIP_PATH_NN each.
    RecordedDisk disk(joined({sdk_files(kRocm + "\\5.7", "amdhip64.dll"), sdk_files(kRocm + "\\6.2", "amdhip64_6.dll")}));
    HipSdkEnvironment env;
    env.hip_path = kRocm + "\\6.2\\";
    env.versioned = {{"HIP_PATH_57", kRocm + "\\5.7\\"}, {"HIP_PATH_62", kRocm + "\\6.2\\"}};
    env.program_files = "C:\\Program Files";
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    ASSERT_EQ(found.sdks.size(), 2u);
    EXPECT_EQ(found.sdks[0].root, kRocm + "\\6.2");
    EXPECT_EQ(found.sdks[0].found_by, "HIP_PATH");
    EXPECT_EQ(found.sdks[0].version, "6.2");
    EXPECT_EQ(found.sdks[1].root, kRocm + "\\5.7");
    EXPECT_EQ(found.sdks[1].found_by, "HIP_PATH_57");
    EXPECT_EQ(found.sdks[1].version, "5.7");
    EXPECT_TRUE(found.skipped.empty());
    EXPECT_EQ(hipinfo_candidates(found.sdks),
              (std::vector<std::string>{kRocm + "\\6.2\\bin\\hipInfo.exe", kRocm + "\\5.7\\bin\\hipInfo.exe", "hipInfo.exe"}));
    // The driver's copy by name first (what the engine's import loads), then each SDK's own.
    EXPECT_EQ(hip_runtime_library_candidates(found.sdks),
              (std::vector<std::string>{"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll", kRocm + "\\6.2\\bin\\amdhip64_6.dll",
                                        kRocm + "\\5.7\\bin\\amdhip64.dll"}));
}

TEST(HipSdk, TheUsersHipPathWinsOverANewerSdk) {
    RecordedDisk disk(joined({sdk_files(kRocm + "\\6.1", "amdhip64_6.dll"), sdk_files(kRocm + "\\6.4", "amdhip64_6.dll")}));
    HipSdkEnvironment env;
    env.hip_path = kRocm + "\\6.1";
    env.program_files = "C:\\Program Files";
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    ASSERT_EQ(found.sdks.size(), 2u);
    EXPECT_EQ(found.sdks[0].version, "6.1");
    EXPECT_EQ(found.sdks[1].version, "6.4");
    EXPECT_EQ(found.sdks[1].found_by, "Program Files");
}

TEST(HipSdk, AStaleHipPathIsSkippedAndSaidAndInstallFoldersAreSortedByNumber) {
    // 5.7 was uninstalled but its variables stayed; 6.4 and 6.10 were unzipped without the installer.
    RecordedDisk disk(joined({sdk_files(kRocm + "\\6.4", "amdhip64_6.dll"), sdk_files(kRocm + "\\6.10", "amdhip64_6.dll"),
                              {kRocm + "\\6.3\\share\\doc\\readme.txt"}}));
    HipSdkEnvironment env;
    env.hip_path = "C:/Program Files/AMD/ROCm/5.7/";
    env.versioned = {{"HIP_PATH_57", kRocm + "\\5.7\\"}};
    env.program_files = "C:\\Program Files";
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    ASSERT_EQ(found.sdks.size(), 2u);
    EXPECT_EQ(found.sdks[0].version, "6.10");
    EXPECT_EQ(found.sdks[1].version, "6.4");
    // The slashes and the trailing separator do not make 5.7 two SDKs; the leftover 6.3 holds no SDK.
    ASSERT_EQ(found.skipped.size(), 2u);
    EXPECT_EQ(found.skipped[0], "HIP_PATH=C:\\Program Files\\AMD\\ROCm\\5.7: the folder does not exist");
    EXPECT_EQ(found.skipped[1], kRocm + "\\6.3: no bin\\hipInfo.exe or bin\\amdhip64*.dll in it");
}

TEST(HipSdk, CaseAndSeparatorsDoNotMakeTwoSdks) {
    RecordedDisk disk(sdk_files(kRocm + "\\6.2", "amdhip64_6.dll"));
    HipSdkEnvironment env;
    env.hip_path = "c:\\program files\\amd\\rocm\\6.2\\";
    env.versioned = {{"HIP_PATH_62", "C:/Program Files/AMD/ROCm/6.2/"}};
    env.program_files = "C:\\Program Files\\";
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    ASSERT_EQ(found.sdks.size(), 1u);
    EXPECT_EQ(found.sdks[0].found_by, "HIP_PATH");
    EXPECT_TRUE(found.skipped.empty());
}

TEST(HipSdk, NoSdkLeavesTheBareNames) {
    RecordedDisk disk({"C:\\Windows\\System32\\amdhip64_6.dll"});
    HipSdkEnvironment env;
    env.program_files = "C:\\Program Files";
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    EXPECT_TRUE(found.sdks.empty());
    EXPECT_TRUE(found.skipped.empty());
    EXPECT_EQ(hipinfo_candidates(found.sdks), std::vector<std::string>{"hipInfo.exe"});
    EXPECT_EQ(hip_runtime_library_candidates(found.sdks), (std::vector<std::string>{"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"}));
    const RuntimeReport report = hip_sdk_report(found);
    EXPECT_FALSE(report.loaded);
    EXPECT_NE(report.status.find("none found"), std::string::npos) << report.status;
}

TEST(HipSdk, AnSdkWithoutHipInfoStillGivesItsRuntime) {
    // A runtime-only redistributable: the DLL without the tools.
    RecordedDisk disk({"D:\\hip\\bin\\amdhip64_6.dll"});
    HipSdkEnvironment env;
    env.hip_path = "D:\\hip";
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    ASSERT_EQ(found.sdks.size(), 1u);
    EXPECT_FALSE(found.sdks[0].has_hipinfo);
    EXPECT_EQ(found.sdks[0].version, "");
    EXPECT_EQ(hipinfo_candidates(found.sdks), std::vector<std::string>{"hipInfo.exe"});
    const RuntimeReport report = hip_sdk_report(found);
    EXPECT_TRUE(report.loaded);
    EXPECT_EQ(report.status, "D:\\hip (HIP_PATH, no hipInfo.exe)");
}

TEST(HipSdk, VersionsCompareByNumber) {
    EXPECT_TRUE(newer_version("6.10", "6.4"));
    EXPECT_FALSE(newer_version("6.4", "6.10"));
    EXPECT_TRUE(newer_version("6.0", "6"));
    EXPECT_TRUE(newer_version("5.7.1", "5.7"));
    EXPECT_TRUE(newer_version("5.7", ""));
    EXPECT_FALSE(newer_version("", "5.7"));
    EXPECT_FALSE(newer_version("6.2", "6.2"));
}

TEST(HipSdk, InstallerVariableNamesGiveTheVersion) {
    RecordedDisk disk(joined({sdk_files("E:\\sdk-a", "amdhip64_6.dll"), sdk_files("E:\\sdk-b", "amdhip64_6.dll")}));
    HipSdkEnvironment env;
    env.versioned = {{"HIP_PATH_61", "E:\\sdk-a"}, {"HIP_PATH_64", "E:\\sdk-b"}, {"HIP_PATH_X", "E:\\nothing"}};
    const HipSdkSearch found = find_hip_sdks(env, disk.view());
    ASSERT_EQ(found.sdks.size(), 2u);
    EXPECT_EQ(found.sdks[0].root, "E:\\sdk-b");
    EXPECT_EQ(found.sdks[0].version, "6.4");
    EXPECT_EQ(found.sdks[1].version, "6.1");
    ASSERT_EQ(found.skipped.size(), 1u);  // HIP_PATH_X: no version, and no folder
    EXPECT_EQ(found.skipped[0], "HIP_PATH_X=E:\\nothing: the folder does not exist");
}

}  // namespace
}  // namespace strata
