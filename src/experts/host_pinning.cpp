#include "experts/host_pinning.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata {
namespace {

double gib(uint64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(uint64_t(1) << 30); }

std::string limit_text(uint64_t limit) {
    return limit == UINT64_MAX ? "" : fmt::format(" (the OS locks at most {:.2f} GiB)", gib(limit));
}

}  // namespace

HostRange page_aligned_range(uintptr_t begin, uintptr_t end) {
    constexpr uintptr_t kPage = 4096;
    const uintptr_t a = begin / kPage * kPage;
    const uintptr_t b = (end + kPage - 1) / kPage * kPage;
    return {a, b - a};
}

PinOutcome pin_expert_ranges(const std::vector<HostRange>& layers, uint64_t limit, HostPinner& pinner) {
    PinOutcome out;
    out.layers_total = layers.size();
    if (layers.empty()) {
        out.note = "no expert tensors to page-lock";
        return out;
    }
    // Neighbouring layers can share a page, and a runtime refuses to lock a page twice: each range
    // starts where the previous one ended.
    std::vector<HostRange> disjoint;
    uintptr_t lo = layers.front().begin, hi = layers.front().begin;
    uint64_t layer_bytes = 0;
    for (const HostRange& r : layers) {
        uintptr_t begin = r.begin, end = r.begin + r.bytes;
        if (!disjoint.empty()) {
            const uintptr_t prev_begin = disjoint.back().begin, prev_end = prev_begin + disjoint.back().bytes;
            if (begin >= prev_begin) begin = std::min(std::max(begin, prev_end), end);  // the usual file order
            else end = std::max(std::min(end, prev_begin), begin);                     // a layer stored before
        }
        disjoint.push_back({begin, end - begin});
        lo = std::min(lo, r.begin), hi = std::max(hi, r.begin + r.bytes);
        layer_bytes += end - begin;
    }
    // The whole span also locks what lies between the layers' experts (attention weights): one
    // registration, and fewer for the driver to track.
    const HostRange whole{lo, hi - lo};
    std::string whole_error;
    if (whole.bytes <= limit) {
        if (pinner.pin(whole, &whole_error)) {
            out.kind = PinOutcome::Kind::Whole;
            out.pinned_bytes = whole.bytes;
            out.layers_pinned = layers.size();
            out.note = fmt::format("{:.2f} GiB of the mapped file page-locked", gib(whole.bytes));
            return out;
        }
    }
    const std::string why_not_whole =
        whole.bytes > limit ? fmt::format("the experts' {:.2f} GiB exceed what the OS locks ({:.2f} GiB)", gib(whole.bytes), gib(limit))
                            : fmt::format("locking their {:.2f} GiB at once failed ({})", gib(whole.bytes), whole_error);
    std::string stop;
    for (const HostRange& r : disjoint) {
        if (r.bytes == 0) {  // wholly inside the previous layer's pages
            ++out.layers_pinned;
            continue;
        }
        if (out.pinned_bytes + r.bytes > limit) {
            stop = fmt::format("layer {} would pass the limit{}", out.layers_pinned, limit_text(limit));
            break;
        }
        std::string error;
        if (!pinner.pin(r, &error)) {
            // A refusal means the driver is at its own limit: asking again for the next layer would
            // only cost time at load.
            stop = fmt::format("the driver refused layer {} ({})", out.layers_pinned, error);
            break;
        }
        out.pinned_bytes += r.bytes;
        ++out.layers_pinned;
    }
    out.kind = out.layers_pinned > 0 ? PinOutcome::Kind::PerLayer : PinOutcome::Kind::None;
    if (out.all_pinned()) {
        out.note = fmt::format("{:.2f} GiB of expert tensors page-locked layer by layer ({} layers): {}", gib(out.pinned_bytes),
                               out.layers_pinned, why_not_whole);
    } else {
        out.note = fmt::format("{} of {} layers' experts page-locked ({:.2f} of {:.2f} GiB), the rest staged by the driver: {}; {}",
                               out.layers_pinned, out.layers_total, gib(out.pinned_bytes), gib(layer_bytes), why_not_whole, stop);
    }
    return out;
}

}  // namespace strata
