#pragma once
// Page-locking the experts' home (the mapped GGUF) so the link copies from it at full speed, within
// what the OS lets a process lock. Windows' display driver model (WDDM) locks at most about half of
// physical RAM, and a registration past that fails as a whole (measured by the Windows ports this
// design came from; a per-call pin inside a running server also collapsed there, so every pin is
// made once, at load). The plan: one registration of the whole span of expert tensors when it fits
// the limit; else, or when the driver refuses it, one registration per MoE layer in layer order
// until the limit is reached or the driver refuses one. Copies from a range left unlocked are
// staged by the driver: slower, never wrong. The outcome says which of the three happened.
//
//   RuntimePinner pinner;                      // the GPU runtime's host registration
//   PinOutcome o = pin_expert_ranges(layer_ranges(), page_lock_limit, pinner);
//   summary.pin_note = o.note;

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// One MoE layer's expert tensors as one page-aligned range of the mapped file.
struct HostRange {
    uintptr_t begin = 0;
    uint64_t bytes = 0;
};

// Who page-locks (the GPU runtime; a recorded driver in tests). Each successful pin lasts as long
// as the pinner does.
class HostPinner {
public:
    virtual ~HostPinner() = default;
    virtual bool pin(const HostRange& range, std::string* error) = 0;
};

struct PinOutcome {
    enum class Kind { Whole, PerLayer, None } kind = Kind::None;
    uint64_t pinned_bytes = 0;
    uint64_t layers_pinned = 0, layers_total = 0;
    std::string note;  // for the start-up summary: what was locked and, when not all, why
    bool all_pinned() const { return layers_total > 0 && layers_pinned == layers_total; }
};

// limit: the most bytes to lock (UINT64_MAX: no limit of the OS's own). Ranges in layer order and
// page-aligned; where one overlaps the pages of the one before, only the rest of it is locked (a
// runtime refuses to lock a page twice).
PinOutcome pin_expert_ranges(const std::vector<HostRange>& layers, uint64_t limit, HostPinner& pinner);

// The smallest page-aligned range holding [begin, end).
HostRange page_aligned_range(uintptr_t begin, uintptr_t end);

}  // namespace strata
