// RAM on Linux, from /proc/meminfo. Other POSIX systems have no such file: the error asks for --ram.
#ifndef _WIN32
#include <cstdint>
#include <fstream>
#include <sstream>

#include "plan/host_ram.h"

namespace strata {

Result<HostRam> read_host_ram() {
    // A stream, not a sized read: files under /proc report a size of 0.
    std::ifstream in("/proc/meminfo");
    if (!in) return Status::error("cannot open /proc/meminfo to find the free RAM (pass --ram SIZE)");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_meminfo(text.str());
}

uint64_t page_lock_limit(uint64_t) { return UINT64_MAX; }

}  // namespace strata
#endif
