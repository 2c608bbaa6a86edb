#include "backend/cpu/cpu_context.h"

namespace strata {

uint8_t* CpuContext::scratch(int slot, size_t bytes) {
    if (slots_.size() <= static_cast<size_t>(slot)) slots_.resize(static_cast<size_t>(slot) + 1);
    AlignedBuffer& b = slots_[static_cast<size_t>(slot)];
    if (b.size() < bytes) b = AlignedBuffer(bytes + bytes / 4);  // grow with headroom
    return b.data();
}

}  // namespace strata
