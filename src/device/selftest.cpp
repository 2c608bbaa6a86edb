#include "device/selftest.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace strata {
namespace {

// CUDA and HIP both promise 256-byte alignment for every allocation; kernels that load 16-byte
// vectors from the start of a buffer (and quant blocks laid out at fixed strides) rely on it.
constexpr uint64_t kAllocationAlignment = 256;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A pattern no stale, zeroed or shifted buffer can match by accident: xorshift64 words.
void fill_pattern(uint8_t* p, size_t n, uint64_t seed) {
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        std::memcpy(p + i, &x, std::min<size_t>(8, n - i));
    }
}

// Frees what a check allocated on every path out of it.
struct DeviceBuffer {
    GpuMemoryApi& api;
    uint64_t address = 0;
    ~DeviceBuffer() {
        if (address) api.release(address);
    }
};
struct PinnedBuffer {
    GpuMemoryApi& api;
    void* host = nullptr;
    ~PinnedBuffer() {
        if (host) api.release_pinned(host);
    }
};

SelftestCheck check_memory_info(GpuMemoryApi& api, GpuMemoryInfo* info) {
    SelftestCheck c{"memory", false, ""};
    auto m = api.memory_info();
    if (!m) {
        c.detail = m.status().message();
        return c;
    }
    *info = *m;
    c.passed = m->total_bytes > 0 && m->free_bytes <= m->total_bytes;
    c.detail = fmt::format("{} total, {} free", selftest_size_text(m->total_bytes), selftest_size_text(m->free_bytes));
    if (!c.passed) c.detail += ": expected 0 < free <= total";
    return c;
}

SelftestCheck check_alignment(GpuMemoryApi& api) {
    SelftestCheck c{"alignment", true, ""};
    const size_t sizes[] = {1, 255, 4097, (size_t{1} << 20) + 3};  // odd sizes: the next one must still be aligned
    std::vector<uint64_t> addresses;
    for (size_t bytes : sizes) {
        auto a = api.allocate(bytes);
        if (!a) {
            c.passed = false;
            c.detail = a.status().message();
            break;
        }
        addresses.push_back(*a);
        if (*a == 0 || *a % kAllocationAlignment != 0) {
            c.passed = false;
            c.detail = fmt::format("an allocation of {} bytes is at {:#x}: expected a multiple of {}", bytes, *a, kAllocationAlignment);
        }
    }
    for (uint64_t a : addresses) api.release(a);
    if (c.passed) c.detail = fmt::format("{} allocations of 1 B to 1 MiB, all {}-byte aligned", addresses.size(), kAllocationAlignment);
    return c;
}

SelftestCheck check_over_allocation(GpuMemoryApi& api, const GpuMemoryInfo& info) {
    SelftestCheck c{"over-allocation", false, ""};
    // Half again the card's memory: no driver may grant it from VRAM, and the engine's planner
    // relies on such a request failing with an error rather than a crash or a silent success.
    const uint64_t request = info.total_bytes > 0 ? info.total_bytes + info.total_bytes / 2 : uint64_t{1} << 48;
    auto a = api.allocate(static_cast<size_t>(std::min<uint64_t>(request, std::numeric_limits<size_t>::max())));
    if (a) {
        api.release(*a);
        c.detail = fmt::format("an allocation of {} succeeded: expected it refused (the card has {})", selftest_size_text(request), selftest_size_text(info.total_bytes));
        return c;
    }
    auto after = api.allocate(size_t{1} << 20);
    if (!after) {
        c.detail = fmt::format("{} refused, but then 1 MiB failed too: {}", selftest_size_text(request), after.status().message());
        return c;
    }
    api.release(*after);
    c.passed = true;
    c.detail = fmt::format("{} refused ({}); 1 MiB allocated after it", selftest_size_text(request), a.status().message());
    return c;
}

SelftestCheck check_fresh_memory(GpuMemoryApi& api, size_t bytes) {
    SelftestCheck c{"fresh memory", false, ""};
    auto a = api.allocate(bytes);
    if (!a) {
        c.detail = a.status().message();
        return c;
    }
    DeviceBuffer buffer{api, *a};
    std::vector<uint8_t> host(bytes, 0);
    if (Status s = api.copy_to_host(host.data(), buffer.address, bytes); !s) {
        c.detail = s.message();
        return c;
    }
    size_t nonzero = 0, not_finite = 0;
    for (size_t i = 0; i < bytes; ++i) nonzero += host[i] != 0;
    for (size_t i = 0; i + 4 <= bytes; i += 4) {
        float f;
        std::memcpy(&f, host.data() + i, 4);
        not_finite += !std::isfinite(f);
    }
    // Informational: runtimes do not promise zeroed memory, so a buffer read before it is written
    // is a bug however this comes out; NaN/Inf here shows what such a bug would feed a kernel.
    c.passed = true;
    c.detail = nonzero == 0 ? fmt::format("{} fresh allocation reads as zeros", selftest_size_text(bytes))
                            : fmt::format("{} fresh allocation holds {} nonzero bytes, {} NaN/Inf as f32 (never read before writing)",
                                          selftest_size_text(bytes), nonzero, not_finite);
    return c;
}

SelftestCheck check_round_trip(GpuMemoryApi& api, const SelftestOptions& o, bool pinned) {
    SelftestCheck c{pinned ? "pinned round trip" : "pageable round trip", false, ""};
    const size_t n = o.copy_bytes;
    std::vector<uint8_t> pageable_src, pageable_dst;
    PinnedBuffer pinned_src{api}, pinned_dst{api};
    uint8_t* src = nullptr;
    uint8_t* dst = nullptr;
    if (pinned) {
        for (PinnedBuffer* b : {&pinned_src, &pinned_dst}) {
            auto p = api.allocate_pinned(n);
            if (!p) {
                c.detail = p.status().message();
                return c;
            }
            b->host = *p;
        }
        src = static_cast<uint8_t*>(pinned_src.host);
        dst = static_cast<uint8_t*>(pinned_dst.host);
    } else {
        pageable_src.resize(n);
        pageable_dst.resize(n);
        src = pageable_src.data();
        dst = pageable_dst.data();
    }
    fill_pattern(src, n, pinned ? 0x9e3779b97f4a7c15ull : 0xd1b54a32d192ed03ull);
    std::memset(dst, 0xa5, n);
    auto a = api.allocate(n);
    if (!a) {
        c.detail = a.status().message();
        return c;
    }
    DeviceBuffer device{api, *a};
    double up = std::numeric_limits<double>::infinity(), down = up;
    for (int r = 0; r < std::max(o.repeats, 1); ++r) {
        auto t0 = Clock::now();
        if (Status s = api.copy_to_device(device.address, src, n); !s) {
            c.detail = s.message();
            return c;
        }
        up = std::min(up, seconds_since(t0));
        t0 = Clock::now();
        if (Status s = api.copy_to_host(dst, device.address, n); !s) {
            c.detail = s.message();
            return c;
        }
        down = std::min(down, seconds_since(t0));
    }
    const std::string rates = fmt::format("host->device {}, device->host {}", selftest_rate_text(n, up), selftest_rate_text(n, down));
    if (std::memcmp(src, dst, n) != 0) {
        size_t first = 0, wrong = 0;
        while (src[first] == dst[first]) ++first;
        for (size_t i = first; i < n; ++i) wrong += src[i] != dst[i];
        c.detail = fmt::format("{}: {} of {} bytes came back different, the first at offset {} (a faulty card, link or driver)", rates, wrong, n, first);
        return c;
    }
    c.passed = true;
    c.detail = fmt::format("{}: {}, bytes identical", selftest_size_text(n), rates);
    return c;
}

}  // namespace

bool SelftestReport::passed() const {
    return std::all_of(checks.begin(), checks.end(), [](const SelftestCheck& c) { return c.passed; });
}

std::string selftest_size_text(uint64_t bytes) {
    if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (uint64_t{1} << 30));
    if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (uint64_t{1} << 20));
    if (bytes >= 1024) return fmt::format("{:.0f} KiB", static_cast<double>(bytes) / 1024);
    return fmt::format("{} B", bytes);
}

std::string selftest_rate_text(uint64_t bytes, double seconds) {
    if (!(seconds > 0)) return "too fast to time";
    return fmt::format("{:.1f} GB/s", static_cast<double>(bytes) / seconds / 1e9);
}

SelftestReport run_memory_selftest(GpuMemoryApi& api, const SelftestOptions& options) {
    SelftestReport report;
    GpuMemoryInfo info;
    report.checks.push_back(check_memory_info(api, &info));
    report.checks.push_back(check_alignment(api));
    report.checks.push_back(check_over_allocation(api, info));
    report.checks.push_back(check_fresh_memory(api, std::min<size_t>(options.copy_bytes, size_t{64} << 20)));
    report.checks.push_back(check_round_trip(api, options, /*pinned=*/false));
    report.checks.push_back(check_round_trip(api, options, /*pinned=*/true));
    return report;
}

}  // namespace strata
