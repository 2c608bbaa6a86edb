#pragma once
// Memory for the expert store's copies: the pinned RAM arena and (in the CPU emulation) the fast
// tier's slots. Allocation goes through this interface so that the GPU build can hand out
// cudaHostAlloc/hipHostMalloc memory (the arena, so copies to VRAM run at full PCIe speed) and
// device memory (the slots) without the store changing.
//
//   AlignedHostAllocator host;
//   std::unique_ptr<HostBuffer> arena = host.allocate(n_experts * slot_bytes);
//   std::memcpy(arena->data() + i * slot_bytes, src, bytes);

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/aligned_buffer.h"

namespace strata {

class HostBuffer {
public:
    virtual ~HostBuffer() = default;
    virtual uint8_t* data() = 0;
    virtual size_t size() const = 0;
};

class HostAllocator {
public:
    virtual ~HostAllocator() = default;
    virtual std::string_view name() const = 0;
    // Aligned to at least 64 bytes; never fails silently (aborts on exhaustion, as new does).
    virtual std::unique_ptr<HostBuffer> allocate(size_t bytes) = 0;
};

// Plain aligned heap memory (huge-page aligned from 2 MiB). Not pinned: copies from it to a GPU
// would be staged by the driver, so the GPU build replaces it for the arena.
class AlignedHostAllocator final : public HostAllocator {
public:
    std::string_view name() const override { return "aligned-host"; }
    std::unique_ptr<HostBuffer> allocate(size_t bytes) override;
};

}  // namespace strata
