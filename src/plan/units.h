#pragma once
// Byte sizes as people type and read them: the memory planner's flags (--vram 24GiB, --ram 64G,
// --vram-reserve 512MiB) and its printed plans.
//
//   STRATA_ASSIGN_OR_RETURN(uint64_t vram, parse_byte_size("24GiB"));   // 25769803776
//   format_bytes(vram);                                                 // "24.00 GiB"

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace strata {

// A number (digits, optionally one '.' and more digits) directly followed by an optional unit:
//   none or B                  bytes
//   K, KiB / M, MiB / G, GiB / T, TiB   powers of 1024 (as GPU and RAM sizes are quoted)
//   KB / MB / GB / TB          powers of 1000 (disk vendors' units; they plan ~7% smaller)
// Units are case-insensitive. No sign, no spaces, no exponent; the result must be a whole number
// of bytes below 2^64 after rounding down. Errors say what was expected and what came.
Result<uint64_t> parse_byte_size(std::string_view text);

// "512 B", "1.50 KiB", "18.13 GiB": binary units, two decimals above bytes.
std::string format_bytes(uint64_t bytes);

}  // namespace strata
