#include "plan/host_ram.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace strata {
namespace {

Result<uint64_t> meminfo_field(std::string_view text, std::string_view name) {
    const std::string key = std::string(name) + ":";
    size_t at = 0;
    // The key must start a line (not be the tail of another key).
    while ((at = text.find(key, at)) != std::string_view::npos && at != 0 && text[at - 1] != '\n') at += key.size();
    if (at == std::string_view::npos) {
        return Status::error("/proc/meminfo: expected a {} line, found none (pass --ram SIZE)", name);
    }
    size_t i = at + key.size();
    while (i < text.size() && text[i] == ' ') ++i;
    uint64_t kib = 0;
    size_t digits = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
        if (kib > std::numeric_limits<uint64_t>::max() / 10 / 1024) {
            return Status::error("/proc/meminfo: {} is too large to be real (pass --ram SIZE)", name);
        }
        kib = kib * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    // The kernel always prints the value in kB (meaning KiB).
    if (digits == 0 || text.substr(i, 3) != " kB") {
        return Status::error("/proc/meminfo: expected \"{}: <n> kB\", got \"{}\" (pass --ram SIZE)", name,
                             text.substr(at, std::min<size_t>(40, text.size() - at)));
    }
    return kib * 1024;
}

}  // namespace

Result<HostRam> parse_meminfo(std::string_view text) {
    HostRam ram;
    STRATA_ASSIGN_OR_RETURN(ram.total_bytes, meminfo_field(text, "MemTotal"));
    STRATA_ASSIGN_OR_RETURN(ram.available_bytes, meminfo_field(text, "MemAvailable"));
    return ram;
}

Result<uint64_t> parse_meminfo_available(std::string_view text) { return meminfo_field(text, "MemAvailable"); }

Result<uint64_t> host_available_ram() {
    STRATA_ASSIGN_OR_RETURN(HostRam ram, read_host_ram());
    return ram.available_bytes;
}

}  // namespace strata
