#pragma once
// GPU runtime objects in plain C++ (no vendor types), so host code compiled by g++ and kernels
// compiled by nvcc or clang -x hip share them: device discovery, a caching pool over plain
// cudaMalloc/hipMalloc (no managed memory), and the context every op runs in (one stream, its
// scratch buffers and the device's warp size).
//
//   std::vector<DeviceInfo> devices; std::string why;
//   if (!find_devices(&devices, &why)) return skip(why);   // "no GPU support in this build", ...
//   DevicePool pool(0);
//   GpuContext ctx(0, pool);
//   DeviceBuffer w = pool.allocate(bytes);  ctx.upload(w.data(), host, bytes);  ctx.synchronize();

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/gpu/gpu_tuning.h"

namespace strata::gpu {

struct DeviceInfo {
    int ordinal = 0;          // the runtime's ordinal in this process
    std::string name;
    std::string arch;         // "sm_90", "gfx1100"
    uint64_t total_bytes = 0;
    int warp_size = 0;        // 32, or 64 on GCN
    int multiprocessors = 0;
};

// "CUDA" or "HIP" in a GPU build; nullptr when the build has no GPU backend.
const char* runtime_name();
// Free and total memory of a device now (other programs' use included); false without one.
bool device_memory(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes);
// True when at least one device is usable; otherwise `why` says what is missing. Any error from
// the runtime's device count (no driver, no device, a container without /dev/nvidia*) is "none".
bool find_devices(std::vector<DeviceInfo>* out, std::string* why);

class DevicePool;
class OpProfiler;

// Device memory from a DevicePool; returned to the pool (not the runtime) when destroyed.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { reset(); }

    void reset();
    void* data() const { return data_; }
    template <typename T> T* as() const { return static_cast<T*>(data_); }
    uint64_t bytes() const { return bytes_; }
    explicit operator bool() const { return data_ != nullptr; }

private:
    friend class DevicePool;
    void* data_ = nullptr;
    uint64_t bytes_ = 0;        // as asked for
    uint64_t block_bytes_ = 0;  // the pool's size class
    DevicePool* pool_ = nullptr;
};

// A caching allocator: freed blocks are kept by size class and reused, so a forward pass that
// needs the same buffers every step allocates from the runtime once. All users share one stream
// (GpuContext), so a block freed and reused in stream order is never touched by two kernels at once.
class DevicePool {
public:
    explicit DevicePool(int ordinal);
    ~DevicePool();
    DevicePool(const DevicePool&) = delete;
    DevicePool& operator=(const DevicePool&) = delete;

    // An empty buffer and `error` set when the device is out of memory, or when the allocation
    // would take the pool's holdings past its budget.
    DeviceBuffer allocate(uint64_t bytes, std::string* error = nullptr);
    // --vram-budget: the pool holds at most this many bytes (0: no limit), so a large card behaves
    // as a smaller one for everything the engine allocates through it.
    void set_budget(uint64_t bytes) { budget_ = bytes; }
    uint64_t budget() const { return budget_; }
    // Cached blocks go back to the runtime.
    void trim();
    uint64_t bytes_in_use() const { return in_use_; }
    uint64_t bytes_held() const { return held_; }  // in use + cached
    int ordinal() const { return ordinal_; }

private:
    friend class DeviceBuffer;
    void release(void* data, uint64_t block_bytes);
    int ordinal_;
    uint64_t in_use_ = 0, held_ = 0, budget_ = 0;
    std::map<uint64_t, std::vector<void*>> cached_;  // size class → free blocks
};

// The stream ops are queued on, with scratch slots (like CpuContext's) that grow to the largest
// size asked for and are then reused.
class GpuContext {
public:
    GpuContext(int ordinal, DevicePool& pool, const GpuTuning& tuning = {});
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;

    // Makes this context's device current on the calling thread (the runtime's choice is per thread).
    void activate() const;
    void* stream() const { return stream_; }  // the vendor stream, opaque here
    int warp_size() const { return info_.warp_size; }
    const DeviceInfo& device() const { return info_; }
    // The kernel switches this context's ops follow (backend/gpu/gpu_tuning.h).
    const GpuTuning& tuning() const { return tuning_; }
    // Whether kernels queued with launch_chained (kernels/common.cuh) may start while the kernel
    // before them drains: a CUDA device of sm_90 or newer running kernels built for it, unless
    // tuning().chained_launches is off.
    bool chained_launches() const { return chained_launches_; }
    // A timing study's switch (GpuTransformer::op, STRATA_GPU_ABLATE): while muted, launch_chained
    // queues nothing, so a decode step shows what an op's kernels cost. Outputs are wrong then.
    bool launches_muted() const { return launches_muted_; }
    void mute_launches(bool muted) { launches_muted_ = muted; }
    DevicePool& pool() { return pool_; }

    void* scratch(int slot, uint64_t bytes);
    float* scratch_floats(int slot, uint64_t count) { return static_cast<float*>(scratch(slot, count * sizeof(float))); }
    // Counts scratch reallocations: a captured graph holds scratch addresses, so it stays valid
    // only while this number does not change.
    uint64_t scratch_generation() const { return scratch_generation_; }

    // Set (backend/gpu/op_profiler.h): the forward brackets each op with events on this stream.
    OpProfiler* profiler() const { return profiler_; }
    void set_profiler(OpProfiler* profiler) { profiler_ = profiler; }

    // Queued copies: the host memory must stay valid until synchronize().
    void upload(void* device_dst, const void* host_src, uint64_t bytes);
    void download(void* host_dst, const void* device_src, uint64_t bytes);
    void synchronize();

private:
    DevicePool& pool_;
    GpuTuning tuning_;
    DeviceInfo info_;
    bool chained_launches_ = false;
    bool launches_muted_ = false;
    void* stream_ = nullptr;
    std::vector<DeviceBuffer> slots_;
    uint64_t scratch_generation_ = 0;
    OpProfiler* profiler_ = nullptr;
};

// Work queued on a stream, captured once and replayed with one launch (CUDA / HIP graphs), so a
// decode step of a thousand small kernels costs one launch on the host. A graph holds the
// addresses and kernel arguments it was captured with: everything that changes per replay must
// be read from device memory, and host copies must come from buffers that stay in place.
//
//   GpuGraph graph;
//   if (graph.begin_capture(ctx.stream(), &why)) { enqueue(); ok = graph.end_capture(ctx.stream(), &why); }
//   graph.launch(ctx.stream());     // as often as wanted, while the captured addresses hold
class GpuGraph {
public:
    GpuGraph() = default;
    ~GpuGraph() { reset(); }
    GpuGraph(const GpuGraph&) = delete;
    GpuGraph& operator=(const GpuGraph&) = delete;

    // Work queued on `stream` from now on is recorded, not run. False (and `error`) when the
    // runtime refuses (the caller then runs eagerly).
    bool begin_capture(void* stream, std::string* error);
    // Stops recording and makes the graph launchable; false (and `error`) when the capture was
    // invalidated or instantiation failed. The stream is usable either way.
    bool end_capture(void* stream, std::string* error);
    bool ready() const { return exec_ != nullptr; }
    void launch(void* stream);
    void reset();

private:
    void* graph_ = nullptr;
    void* exec_ = nullptr;
};

// ---- copies beside compute ---------------------------------------------------------------------
// A second queue (expert copies run on one while the context's stream computes), events that
// order the two without a host wait, and page-locked host memory for full-speed async copies.

class GpuStream {
public:
    explicit GpuStream(int ordinal);
    ~GpuStream();
    GpuStream(const GpuStream&) = delete;
    GpuStream& operator=(const GpuStream&) = delete;
    void* handle() const { return stream_; }
    void synchronize();

private:
    void* stream_ = nullptr;
};

class GpuEvent {
public:
    GpuEvent();
    ~GpuEvent();
    GpuEvent(const GpuEvent&) = delete;
    GpuEvent& operator=(const GpuEvent&) = delete;
    void record(void* stream);          // marks the work queued on `stream` so far
    void make_wait(void* stream) const; // later work on `stream` starts after the marked work
    void synchronize() const;           // the host waits for the marked work
    bool done() const;                  // without waiting
    // Milliseconds between two recorded events (both done).
    float ms_since(const GpuEvent& start) const;

private:
    void* event_ = nullptr;
};

// Page-locked host memory (cudaMallocHost / hipHostMalloc).
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(PinnedBuffer&& other) noexcept { *this = std::move(other); }
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
    ~PinnedBuffer();
    // False (and `error`) when the runtime refuses.
    bool allocate(uint64_t bytes, std::string* error);
    void* data() const { return data_; }
    template <typename T> T* as() const { return static_cast<T*>(data_); }
    uint64_t bytes() const { return bytes_; }
    // The address through which kernels read and write this memory (the runtime maps page-locked
    // memory into the GPU's address space), or null where the runtime does not.
    void* device_view() const { return device_view_; }

private:
    void* data_ = nullptr;
    void* device_view_ = nullptr;
    uint64_t bytes_ = 0;
};

// Page-locks an existing host range (the mapped GGUF's expert tensors) for as long as it lives.
class HostRegistration {
public:
    HostRegistration() = default;
    ~HostRegistration();
    HostRegistration(const HostRegistration&) = delete;
    HostRegistration& operator=(const HostRegistration&) = delete;
    // False (and `error`) when the OS or driver refuses (too little lockable memory, HIP and a
    // read-only mapping); copies from the range then go through pinned staging buffers.
    bool register_range(const void* ptr, uint64_t bytes, bool read_only, std::string* error);
    bool registered() const { return ptr_ != nullptr; }

private:
    void* ptr_ = nullptr;
};

// Queued on any stream (a GpuContext's or a GpuStream's handle).
void copy_h2d_async(void* device_dst, const void* host_src, uint64_t bytes, void* stream);
// Host → device copies gathered and queued with one driver call (CUDA 12.8+; else one by one):
// many small copies (an expert's three parts, a layer's misses) cost one API entry, not each.
class CopyBatch {
public:
    void add(void* device_dst, const void* host_src, uint64_t bytes) {
        dsts_.push_back(device_dst), srcs_.push_back(host_src), sizes_.push_back(bytes);
    }
    size_t size() const { return dsts_.size(); }
    void submit(void* stream);  // queues the gathered copies and starts a new batch
private:
    std::vector<void*> dsts_;
    std::vector<const void*> srcs_;
    std::vector<size_t> sizes_;
};
void copy_d2h_async(void* host_dst, const void* device_src, uint64_t bytes, void* stream);
void memset_async(void* device_dst, int value, uint64_t bytes, void* stream);

// ---- several GPUs ------------------------------------------------------------------------------
// Lets `ordinal` read `peer`'s memory directly (NVLink or PCIe peer-to-peer); false when the pair
// cannot, and copies between them are then staged through host memory by the runtime. True for
// ordinal == peer (two shares of one card, as the tests split a model). tuning.peer_access off:
// false for every pair of different GPUs (to test the staged path on a machine with peer access).
bool enable_peer_access(int ordinal, int peer, const GpuTuning& tuning);
// Device memory of one GPU to another's (or within one), queued on `stream`, a stream of the
// destination's device; ordered after earlier work on it only (make it wait on the source's event).
// Between GPUs whose peer access is enabled (or within one) the copy can be captured in a graph;
// a copy staged through host memory cannot.
void copy_peer_async(void* dst, int dst_ordinal, const void* src, int src_ordinal, uint64_t bytes, void* stream);

}  // namespace strata::gpu
