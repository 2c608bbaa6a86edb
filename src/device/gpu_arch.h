#pragma once
// GPU architectures: what each AMD gfx target is (family, wave size, iGPU or not), which Radeon
// and Instinct product names map to which target, how KFD encodes targets, and whether a device's
// arch is among the archs a build was compiled for. All tables live in gpu_arch.cpp, nowhere else.
//
//   std::string arch = gfx_arch_from_kfd_version(120001);            // "gfx1201"
//   const AmdArchInfo* info = find_amd_arch("gfx1036");                 // RDNA2, integrated
//   std::string guess = amd_arch_from_product_name("AMD Radeon RX 9070 XT");  // "gfx1201"
//   ArchSet built = ArchSet::parse("sm_90;gfx1201");
//   bool ok = built.contains("gfx1201");

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct AmdArchInfo {
    const char* arch;      // "gfx1201"
    const char* family;    // "RDNA4"
    int wave_size;         // 32 on RDNA, 64 on GCN/CDNA
    bool integrated_only;  // the target exists only as an APU's GPU (Ryzen iGPU, Strix Halo)
};

// nullptr for a target the table does not know (the device is still listed, with its raw arch).
const AmdArchInfo* find_amd_arch(std::string_view arch);

// KFD's gfx_target_version is major*10000 + minor*100 + stepping; the stepping is printed in
// hex, so 90010 is gfx90a. Returns "" for 0 (CPU node or a kernel too old to report it).
std::string gfx_arch_from_kfd_version(uint32_t version);

// "gfx90a:sramecc+:xnack-" -> "gfx90a": feature flags do not change which code objects run.
std::string strip_arch_features(std::string_view arch);

// Arch of a Radeon/Instinct card from its marketing name, for listings that carry no arch
// (Windows registry DriverDesc). Matches whole words ("RX 7600" never matches "RX 7600M" wrongly
// or "RX 760"); returns "" when the name is unknown or generic ("AMD Radeon(TM) Graphics").
std::string amd_arch_from_product_name(std::string_view name);

// "sm_90" for compute capability 9.0.
std::string cuda_arch_name(int major, int minor);

// A set of compiled GPU archs, written as a build passes them: "sm_80;sm_90;gfx1100;gfx1201",
// CMake's CUDA forms ("90", "90-real", "90-virtual", "compute_90") included.
class ArchSet {
public:
    static ArchSet parse(std::string_view list);
    // Every arch this project knows how to build for (what `--for-archs all` means).
    static ArchSet all_buildable();

    // NVIDIA: sm_XY runs cubins built for sm_XZ with Z <= Y (same major) and JIT-compiles any
    // PTX (compute_AB) with AB <= XY. AMD: only the exact gfx target runs.
    bool contains(std::string_view device_arch) const;
    bool empty() const;
    std::string to_string() const;  // for messages: "sm_90, gfx1201" or "none"

private:
    std::vector<int> sm_;   // cubin targets as major*10+minor
    std::vector<int> ptx_;  // PTX targets as major*10+minor
    std::vector<std::string> gfx_;
    int all_nvidia_from_ = -1;  // all_buildable(): every sm >= this (nvcc's oldest target)
};

}  // namespace strata
