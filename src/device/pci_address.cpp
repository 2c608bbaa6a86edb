#include "device/pci_address.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace strata {
namespace {

std::optional<uint32_t> parse_hex(std::string_view s, size_t max_digits) {
    if (s.empty() || s.size() > max_digits) return std::nullopt;
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<PciAddress> PciAddress::parse(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    size_t dot = text.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    std::vector<std::string_view> parts;
    std::string_view head = text.substr(0, dot);
    for (size_t start = 0;;) {
        size_t colon = head.find(':', start);
        parts.push_back(head.substr(start, colon == std::string_view::npos ? colon : colon - start));
        if (colon == std::string_view::npos) break;
        start = colon + 1;
    }
    if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
    PciAddress a;
    size_t i = 0;
    if (parts.size() == 3) {
        auto d = parse_hex(parts[i++], 8);
        if (!d) return std::nullopt;
        a.domain = *d;
    }
    auto bus = parse_hex(parts[i++], 2);
    auto dev = parse_hex(parts[i], 2);
    auto fn = parse_hex(text.substr(dot + 1), 1);
    if (!bus || !dev || !fn || *dev > 31 || *fn > 7) return std::nullopt;
    a.bus = *bus;
    a.device = *dev;
    a.function = *fn;
    return a;
}

PciAddress PciAddress::from_kfd_location(uint32_t domain, uint32_t location_id) {
    PciAddress a;
    a.domain = domain;
    a.bus = (location_id >> 8) & 0xff;
    a.device = (location_id >> 3) & 0x1f;
    a.function = location_id & 0x7;
    return a;
}

std::string PciAddress::to_string() const {
    return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

}  // namespace strata
