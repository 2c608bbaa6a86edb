// RAM on Windows, from GlobalMemoryStatusEx; page-locking limited as WDDM limits it.
#ifdef _WIN32
#include <windows.h>

#include "plan/host_ram.h"

namespace strata {

Result<HostRam> read_host_ram() {
    MEMORYSTATUSEX status{};
    status.dwLength = sizeof(status);
    if (!GlobalMemoryStatusEx(&status)) {
        return Status::error("GlobalMemoryStatusEx failed (error {}) finding the free RAM (pass --ram SIZE)",
                             static_cast<unsigned long>(GetLastError()));
    }
    return HostRam{status.ullTotalPhys, status.ullAvailPhys};
}

uint64_t page_lock_limit(uint64_t total_ram_bytes) { return total_ram_bytes / 2; }

}  // namespace strata
#endif
