#include "experts/host_memory.h"

namespace strata {
namespace {

class AlignedHostBuffer final : public HostBuffer {
public:
    explicit AlignedHostBuffer(size_t bytes) : buf_(bytes) {}
    uint8_t* data() override { return buf_.data(); }
    size_t size() const override { return buf_.size(); }

private:
    AlignedBuffer buf_;
};

}  // namespace

std::unique_ptr<HostBuffer> AlignedHostAllocator::allocate(size_t bytes) {
    return std::make_unique<AlignedHostBuffer>(bytes);
}

}  // namespace strata
