#pragma once
// This machine's RAM as the planner sees it, and how much of it a GPU may page-lock.
//
//   STRATA_ASSIGN_OR_RETURN(HostRam ram, read_host_ram());   // total and available
//   tiers.page_lock_limit = page_lock_limit(ram.total_bytes);

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace strata {

struct HostRam {
    uint64_t total_bytes = 0;
    uint64_t available_bytes = 0;  // what programs can still get without swapping (MemAvailable)
};

// Linux: /proc/meminfo; Windows: GlobalMemoryStatusEx. An error elsewhere or when unreadable, so
// callers ask the user for --ram.
Result<HostRam> read_host_ram();
Result<uint64_t> host_available_ram();  // read_host_ram()'s available_bytes

// MemTotal and MemAvailable from the text of /proc/meminfo ("MemAvailable:   123456 kB"), in bytes.
Result<HostRam> parse_meminfo(std::string_view meminfo_text);
Result<uint64_t> parse_meminfo_available(std::string_view meminfo_text);

// The most a process should page-lock for a GPU's copies. Windows' display driver model (WDDM)
// locks at most about half of physical RAM (the Windows ports this design came from met it: a
// larger registration fails); Linux's GPU drivers lock without a limit of their own (UINT64_MAX).
uint64_t page_lock_limit(uint64_t total_ram_bytes);

}  // namespace strata
