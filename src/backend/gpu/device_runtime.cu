// Device discovery, the caching pool and the op context (backend/gpu/device_runtime.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "backend/gpu/device_runtime.h"
#include "backend/gpu/vendor/runtime.h"

namespace strata::gpu {

namespace detail {
[[noreturn]] void runtime_failed(const char* file, int line, const char* call, const char* message) {
    std::fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, vendor::kRuntimeName, call, message);
    std::abort();
}
}  // namespace detail

const char* runtime_name() { return vendor::kRuntimeName; }

bool device_memory(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) {
    size_t f = 0, t = 0;
    if (!vendor::ok(vendor::set_device(ordinal)) || !vendor::ok(vendor::memory_info(&f, &t))) {
        static_cast<void>(vendor::last_error());
        return false;
    }
    *free_bytes = f, *total_bytes = t;
    return true;
}

bool find_devices(std::vector<DeviceInfo>* out, std::string* why) {
    out->clear();
    int n = 0;
    const vendor::Error e = vendor::device_count(&n);
    if (!vendor::ok(e)) {
        static_cast<void>(vendor::last_error());  // clear the sticky error so later calls do not report it again
        *why = std::string(vendor::kRuntimeName) + ": no usable device (" + vendor::error_string(e) + ")";
        return false;
    }
    for (int i = 0; i < n; ++i) {
        vendor::DeviceProps p;
        if (!vendor::ok(vendor::device_props(i, &p))) continue;
        out->push_back(DeviceInfo{i, p.name, p.arch, p.total_bytes, p.warp_size, p.multiprocessors});
    }
    if (out->empty()) {
        *why = std::string(vendor::kRuntimeName) + ": no device found";
        return false;
    }
    return true;
}

// ---- DevicePool -------------------------------------------------------------------------------

namespace {
// Size classes: powers of two up to 4 MiB (activations, small weights), then whole 2 MiB steps, so
// a cached block fits the next request of about the same size without wasting more than 2 MiB.
uint64_t size_class(uint64_t bytes) {
    constexpr uint64_t kMin = 256, kPow2Limit = 4ull << 20, kStep = 2ull << 20;
    if (bytes <= kMin) return kMin;
    if (bytes <= kPow2Limit) {
        uint64_t c = kMin;
        while (c < bytes) c *= 2;
        return c;
    }
    return (bytes + kStep - 1) / kStep * kStep;
}
}  // namespace

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        reset();
        data_ = other.data_, bytes_ = other.bytes_, block_bytes_ = other.block_bytes_, pool_ = other.pool_;
        other.data_ = nullptr, other.bytes_ = 0, other.block_bytes_ = 0, other.pool_ = nullptr;
    }
    return *this;
}

void DeviceBuffer::reset() {
    if (data_ && pool_) pool_->release(data_, block_bytes_);
    data_ = nullptr, bytes_ = 0, block_bytes_ = 0, pool_ = nullptr;
}

DevicePool::DevicePool(int ordinal) : ordinal_(ordinal) {}

DevicePool::~DevicePool() {
    // Buffers still alive at this point are a bug of their owner; their memory goes with the pool.
    trim();
}

DeviceBuffer DevicePool::allocate(uint64_t bytes, std::string* error) {
    DeviceBuffer b;
    const uint64_t block = size_class(bytes);
    void* data = nullptr;
    if (auto it = cached_.find(block); it != cached_.end() && !it->second.empty()) {
        data = it->second.back();
        it->second.pop_back();
    } else {
        if (budget_ > 0 && held_ + block > budget_) trim();  // cached blocks of other sizes count too
        if (budget_ > 0 && held_ + block > budget_) {
            if (error) {
                *error = "over the VRAM budget: " + std::to_string(block >> 20) + " MiB more asked for with " +
                         std::to_string(held_ >> 20) + " MiB of " + std::to_string(budget_ >> 20) +
                         " MiB already held (a larger --vram-budget, or a plan that leaves more room)";
            }
            return b;
        }
        STRATA_GPU_CHECK(vendor::set_device(ordinal_));
        vendor::Error e = vendor::malloc_device(&data, block);
        if (!vendor::ok(e)) {
            static_cast<void>(vendor::last_error());
            trim();  // cached blocks of other sizes may be what is missing
            e = vendor::malloc_device(&data, block);
        }
        if (!vendor::ok(e)) {
            static_cast<void>(vendor::last_error());
            if (error) {
                *error = "out of GPU memory: " + std::to_string(block >> 20) + " MiB more asked for with " +
                         std::to_string(held_ >> 20) + " MiB already held (" + vendor::error_string(e) + ")";
            }
            return b;
        }
        held_ += block;
    }
    in_use_ += block;
    b.data_ = data, b.bytes_ = bytes, b.block_bytes_ = block, b.pool_ = this;
    return b;
}

void DevicePool::release(void* data, uint64_t block_bytes) {
    in_use_ -= block_bytes;
    cached_[block_bytes].push_back(data);
}

void DevicePool::trim() {
    for (auto& [block, list] : cached_) {
        for (void* p : list) {
            static_cast<void>(vendor::free_device(p));  // nothing to do about a failure at teardown
            held_ -= block;
        }
        list.clear();
    }
}

// ---- GpuContext -------------------------------------------------------------------------------

namespace {

// Compiled for the same targets as every kernel file, so its build stands for theirs.
__global__ void chained_launch_probe() {}


// Chained launches need sm_90 ("sm_90", "sm_100"; HIP's "gfx..." never) and kernels compiled for it.
// GpuTuning::chained_launches off launches every kernel plainly (A/B, or to rule chaining out).
bool chained_launches_work(const DeviceInfo& info, const GpuTuning& tuning) {
    if (!tuning.chained_launches || info.arch.rfind("sm_", 0) != 0 || std::atoi(info.arch.c_str() + 3) < 90) {
        return false;
    }
    bool compiled = false;
    if (!vendor::ok(vendor::chained_launch_compiled(reinterpret_cast<const void*>(&chained_launch_probe), &compiled))) {
        static_cast<void>(vendor::last_error());  // no image for this device: the first real launch says so
    }
    return compiled;
}

}  // namespace

GpuContext::GpuContext(int ordinal, DevicePool& pool, const GpuTuning& tuning) : pool_(pool), tuning_(tuning) {
    vendor::DeviceProps p;
    STRATA_GPU_CHECK(vendor::device_props(ordinal, &p));
    info_ = DeviceInfo{ordinal, p.name, p.arch, p.total_bytes, p.warp_size, p.multiprocessors};
    STRATA_GPU_CHECK(vendor::set_device(ordinal));
    chained_launches_ = chained_launches_work(info_, tuning_);
    vendor::Stream s = nullptr;
    STRATA_GPU_CHECK(vendor::stream_create(&s));
    stream_ = s;
}

GpuContext::~GpuContext() {
    // Destructors cannot report; a failure here means the device is already lost.
    static_cast<void>(vendor::stream_synchronize(static_cast<vendor::Stream>(stream_)));
    slots_.clear();
    static_cast<void>(vendor::stream_destroy(static_cast<vendor::Stream>(stream_)));
}

void GpuContext::activate() const { STRATA_GPU_CHECK(vendor::set_device(info_.ordinal)); }

void* GpuContext::scratch(int slot, uint64_t bytes) {
    if (slots_.size() <= static_cast<size_t>(slot)) slots_.resize(static_cast<size_t>(slot) + 1);
    DeviceBuffer& b = slots_[static_cast<size_t>(slot)];
    if (b.bytes() < bytes) {
        std::string error;
        b = pool_.allocate(bytes + bytes / 4, &error);  // grow with headroom, as CpuContext does
        if (!b) detail::runtime_failed(__FILE__, __LINE__, "scratch allocation", error.c_str());
        ++scratch_generation_;
    }
    return b.data();
}

void GpuContext::upload(void* device_dst, const void* host_src, uint64_t bytes) {
    if (bytes) STRATA_GPU_CHECK(vendor::copy_h2d_async(device_dst, host_src, bytes, static_cast<vendor::Stream>(stream_)));
}

void GpuContext::download(void* host_dst, const void* device_src, uint64_t bytes) {
    if (bytes) STRATA_GPU_CHECK(vendor::copy_d2h_async(host_dst, device_src, bytes, static_cast<vendor::Stream>(stream_)));
}

void GpuContext::synchronize() { STRATA_GPU_CHECK(vendor::stream_synchronize(static_cast<vendor::Stream>(stream_))); }

// ---- streams, events, pinned memory, graphs ----------------------------------------------------

namespace {
vendor::Stream as_stream(void* s) { return static_cast<vendor::Stream>(s); }
vendor::Event as_event(void* e) { return static_cast<vendor::Event>(e); }
}  // namespace

bool GpuGraph::begin_capture(void* stream, std::string* error) {
    reset();
    const vendor::Error e = vendor::stream_begin_capture(as_stream(stream));
    if (!vendor::ok(e)) {
        static_cast<void>(vendor::last_error());
        if (error) *error = vendor::error_string(e);
        return false;
    }
    return true;
}

bool GpuGraph::end_capture(void* stream, std::string* error) {
    vendor::Graph graph = nullptr;
    vendor::Error e = vendor::stream_end_capture(as_stream(stream), &graph);
    if (vendor::ok(e)) {
        graph_ = graph;
        vendor::GraphExec exec = nullptr;
        e = vendor::graph_instantiate(&exec, graph);
        if (vendor::ok(e)) exec_ = exec;
    }
    if (!vendor::ok(e)) {
        static_cast<void>(vendor::last_error());  // an invalidated capture leaves a sticky error behind
        if (error) *error = vendor::error_string(e);
        reset();
        return false;
    }
    return true;
}

void GpuGraph::launch(void* stream) {
    STRATA_CHECK(exec_ != nullptr, "GpuGraph::launch before a successful capture");
    STRATA_GPU_CHECK(vendor::graph_launch(static_cast<vendor::GraphExec>(exec_), as_stream(stream)));
}

void GpuGraph::reset() {
    if (exec_) static_cast<void>(vendor::graph_exec_destroy(static_cast<vendor::GraphExec>(exec_)));
    if (graph_) static_cast<void>(vendor::graph_destroy(static_cast<vendor::Graph>(graph_)));
    exec_ = nullptr, graph_ = nullptr;
}

GpuStream::GpuStream(int ordinal) {
    STRATA_GPU_CHECK(vendor::set_device(ordinal));
    vendor::Stream s = nullptr;
    STRATA_GPU_CHECK(vendor::stream_create(&s));
    stream_ = s;
}

GpuStream::~GpuStream() {
    static_cast<void>(vendor::stream_synchronize(as_stream(stream_)));
    static_cast<void>(vendor::stream_destroy(as_stream(stream_)));
}

void GpuStream::synchronize() { STRATA_GPU_CHECK(vendor::stream_synchronize(as_stream(stream_))); }

GpuEvent::GpuEvent() {
    vendor::Event e = nullptr;
    STRATA_GPU_CHECK(vendor::event_create(&e));
    event_ = e;
}

GpuEvent::~GpuEvent() { static_cast<void>(vendor::event_destroy(as_event(event_))); }

void GpuEvent::record(void* stream) { STRATA_GPU_CHECK(vendor::event_record(as_event(event_), as_stream(stream))); }
void GpuEvent::make_wait(void* stream) const {
    STRATA_GPU_CHECK(vendor::stream_wait_event(as_stream(stream), as_event(event_)));
}
void GpuEvent::synchronize() const { STRATA_GPU_CHECK(vendor::event_synchronize(as_event(event_))); }

bool GpuEvent::done() const {
    const vendor::Error e = vendor::event_query(as_event(event_));
    if (vendor::event_pending(e)) {
        static_cast<void>(vendor::last_error());
        return false;
    }
    STRATA_GPU_CHECK(e);
    return true;
}

float GpuEvent::ms_since(const GpuEvent& start) const {
    float ms = 0.0f;
    STRATA_GPU_CHECK(vendor::event_elapsed_ms(&ms, as_event(start.event_), as_event(event_)));
    return ms;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
    if (this != &other) {
        if (data_) static_cast<void>(vendor::free_pinned(data_));
        data_ = other.data_, bytes_ = other.bytes_, device_view_ = other.device_view_;
        other.data_ = nullptr, other.bytes_ = 0, other.device_view_ = nullptr;
    }
    return *this;
}

PinnedBuffer::~PinnedBuffer() {
    if (data_) static_cast<void>(vendor::free_pinned(data_));
}

bool PinnedBuffer::allocate(uint64_t bytes, std::string* error) {
    if (data_) static_cast<void>(vendor::free_pinned(data_));
    data_ = nullptr, bytes_ = 0, device_view_ = nullptr;
    const vendor::Error e = vendor::malloc_pinned(&data_, bytes);
    if (!vendor::ok(e)) {
        static_cast<void>(vendor::last_error());
        data_ = nullptr;
        if (error) *error = std::string("pinned host memory of ") + std::to_string(bytes >> 20) + " MiB: " + vendor::error_string(e);
        return false;
    }
    bytes_ = bytes;
    if (!vendor::ok(vendor::host_device_pointer(data_, &device_view_))) {
        static_cast<void>(vendor::last_error());  // not mapped: callers copy instead
        device_view_ = nullptr;
    }
    return true;
}

HostRegistration::~HostRegistration() {
    if (ptr_) static_cast<void>(vendor::host_unregister(ptr_));
}

bool HostRegistration::register_range(const void* ptr, uint64_t bytes, bool read_only, std::string* error) {
    void* p = const_cast<void*>(ptr);  // the runtime's signature; read_only tells it we never write
    const vendor::Error e = vendor::host_register(p, bytes, read_only);
    if (!vendor::ok(e)) {
        static_cast<void>(vendor::last_error());
        if (error) *error = vendor::error_string(e);
        return false;
    }
    ptr_ = p;
    return true;
}

void copy_h2d_async(void* device_dst, const void* host_src, uint64_t bytes, void* stream) {
    if (bytes) STRATA_GPU_CHECK(vendor::copy_h2d_async(device_dst, host_src, bytes, as_stream(stream)));
}
void CopyBatch::submit(void* stream) {
    if (dsts_.empty()) return;
    // A driver older than the runtime refuses the batch call: fall back to single copies for good.
    static bool batch_works = true;
    if (batch_works) {
        const vendor::Error e = vendor::copy_h2d_batch_async(dsts_.data(), srcs_.data(), sizes_.data(), dsts_.size(),
                                                             as_stream(stream));
        if (!vendor::ok(e)) {
            static_cast<void>(vendor::last_error());
            batch_works = false;
        }
    }
    if (!batch_works) {
        for (size_t i = 0; i < dsts_.size(); ++i) copy_h2d_async(dsts_[i], srcs_[i], sizes_[i], stream);
    }
    dsts_.clear(), srcs_.clear(), sizes_.clear();
}

void copy_d2h_async(void* host_dst, const void* device_src, uint64_t bytes, void* stream) {
    if (bytes) STRATA_GPU_CHECK(vendor::copy_d2h_async(host_dst, device_src, bytes, as_stream(stream)));
}
void memset_async(void* device_dst, int value, uint64_t bytes, void* stream) {
    if (bytes) STRATA_GPU_CHECK(vendor::memset_async(device_dst, value, bytes, as_stream(stream)));
}

namespace {
// The (device, peer) pairs whose peer access this process enabled: copies between them are plain
// device-to-device copies (UVA resolves the devices), which a graph capture accepts.
std::mutex peer_mutex;
std::set<std::pair<int, int>> peer_pairs;
}  // namespace

bool enable_peer_access(int ordinal, int peer, const GpuTuning& tuning) {
    if (ordinal == peer) return true;
    // Off: behave as a pair without peer access (copies staged through host memory), so a machine
    // whose GPUs have it can test that path.
    if (!tuning.peer_access) return false;
    int can = 0;
    if (!vendor::ok(vendor::can_access_peer(&can, ordinal, peer)) || !can) {
        static_cast<void>(vendor::last_error());
        return false;
    }
    STRATA_GPU_CHECK(vendor::set_device(ordinal));
    if (!vendor::ok(vendor::enable_peer_access(peer))) {
        static_cast<void>(vendor::last_error());
        return false;
    }
    std::lock_guard lock(peer_mutex);
    peer_pairs.emplace(ordinal, peer);
    return true;
}

void copy_peer_async(void* dst, int dst_ordinal, const void* src, int src_ordinal, uint64_t bytes, void* stream) {
    if (!bytes) return;
    bool direct = dst_ordinal == src_ordinal;
    if (!direct) {
        std::lock_guard lock(peer_mutex);
        direct = peer_pairs.count({dst_ordinal, src_ordinal}) > 0;
    }
    if (direct) {
        STRATA_GPU_CHECK(vendor::copy_d2d_async(dst, src, bytes, as_stream(stream)));
    } else {  // staged through host memory by the runtime; not capturable (no graphs then)
        STRATA_GPU_CHECK(vendor::copy_peer_async(dst, dst_ordinal, src, src_ordinal, bytes, as_stream(stream)));
    }
}

}  // namespace strata::gpu
