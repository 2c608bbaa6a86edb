#include "plan/units.h"

#include <cctype>
#include <limits>

namespace strata {

namespace {

bool equals_ignore_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    }
    return true;
}

// Bytes per unit, 0 when the unit is unknown.
uint64_t unit_multiplier(std::string_view unit) {
    struct Unit {
        std::string_view name;
        uint64_t bytes;
    };
    static constexpr uint64_t Ki = 1024, Ki2 = Ki * Ki, Ki3 = Ki2 * Ki, Ki4 = Ki3 * Ki;
    static constexpr Unit kUnits[] = {
        {"", 1},        {"b", 1},
        {"k", Ki},      {"kib", Ki},     {"kb", 1000},
        {"m", Ki2},     {"mib", Ki2},    {"mb", 1000'000},
        {"g", Ki3},     {"gib", Ki3},    {"gb", 1000'000'000},
        {"t", Ki4},     {"tib", Ki4},    {"tb", 1000'000'000'000},
    };
    for (const Unit& u : kUnits) {
        if (equals_ignore_case(unit, u.name)) return u.bytes;
    }
    return 0;
}

}  // namespace

Result<uint64_t> parse_byte_size(std::string_view text) {
    auto fail = [&](std::string_view why) {
        return Status::error("size: expected a number with an optional unit (B, KiB, MiB, GiB, TiB, K, M, G, T, "
                             "KB, MB, GB, TB) like 24GiB, 512MiB or 10G, got \"{}\" ({})",
                             text, why);
    };
    if (text.empty()) return fail("empty");
    size_t i = 0;
    uint64_t whole = 0;
    size_t whole_digits = 0;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++whole_digits) {
        const uint64_t d = static_cast<uint64_t>(text[i] - '0');
        if (whole > (std::numeric_limits<uint64_t>::max() - d) / 10) return fail("too large");
        whole = whole * 10 + d;
    }
    // The fraction is kept as digits (numerator / 10^n) so "1.5GiB" is exact, not a double's guess.
    uint64_t frac = 0, frac_scale = 1;
    size_t frac_digits = 0;
    if (i < text.size() && text[i] == '.') {
        ++i;
        for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++frac_digits) {
            if (frac_digits >= 9) continue;  // beyond a billionth of a unit nothing changes a byte count
            frac = frac * 10 + static_cast<uint64_t>(text[i] - '0');
            frac_scale *= 10;
        }
        if (frac_digits == 0) return fail("no digits after '.'");
    }
    if (whole_digits == 0) return fail(frac_digits ? "no digits before '.'" : "does not start with a digit");
    const std::string_view unit = text.substr(i);
    const uint64_t mult = unit_multiplier(unit);
    if (mult == 0) return fail(fmt::format("unknown unit \"{}\"", unit));
    if (whole > std::numeric_limits<uint64_t>::max() / mult) return fail("too large");
    // frac < frac_scale <= 1e9 and mult <= 2^40, so the product stays below 2^70: split it.
    const uint64_t frac_bytes = (mult / frac_scale) * frac + (mult % frac_scale) * frac / frac_scale;
    const uint64_t total = whole * mult;
    if (total > std::numeric_limits<uint64_t>::max() - frac_bytes) return fail("too large");
    return total + frac_bytes;
}

std::string format_bytes(uint64_t bytes) {
    static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        ++u;
    }
    return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", v, kUnits[u]);
}

}  // namespace strata
