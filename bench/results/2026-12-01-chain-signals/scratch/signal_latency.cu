// Scratch: how long does a signal take between the host and a waiting kernel, through page-locked
// host memory, with the PCIe link idle and with a copy engine streaming host -> VRAM? The expert
// tiers' decode chain does this twice a layer (the GPU sees the CPU lane's counter and reads its
// sum; the host sees the routing's flag). Each round: the host raises `go`, a waiting kernel sees
// it, optionally reads N bytes of host memory, writes `ack` (with or without a system fence); the
// host spins on `ack`. Median of the rounds' host-measured times.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

// mode bit 0: read `words` floats of host data after seeing go; bit 1: fence before the ack;
// bit 2: tagged data, every thread polls its own (value, tag) pairs instead of a flag.
__global__ void waiter(const volatile uint32_t* go, uint32_t want, const volatile unsigned long long* data, int words, float* sink,
                       volatile uint32_t* ack, int mode) {
    __shared__ int seen;
    float acc = 0;
    if (mode & 4) {
        for (int i = threadIdx.x; i < words; i += blockDim.x) {
            unsigned long long v;
            do { v = data[i]; } while (static_cast<uint32_t>(v >> 32) != want);
            acc += __uint_as_float(static_cast<uint32_t>(v));
        }
        __syncthreads();
    } else {
        if (threadIdx.x == 0) {
            while (*go != want) {}
            seen = 1;
        }
        __syncthreads();
        if (mode & 1) {
            for (int i = threadIdx.x; i < words; i += blockDim.x) acc += __uint_as_float(static_cast<uint32_t>(data[i]));
        }
        __syncthreads();
    }
    if (acc == 1234.5f) sink[0] = acc;
    if (threadIdx.x == 0) {
        if (mode & 2) __threadfence_system();
        *ack = want;
    }
}

int main() {
    const size_t big = 1024u << 20;
    void *hbig, *dbig;
    CK(cudaMallocHost(&hbig, big));
    CK(cudaMalloc(&dbig, big));
    uint32_t *hgo, *hack;
    unsigned long long* hdata;
    CK(cudaHostAlloc(&hgo, 64, cudaHostAllocMapped));
    CK(cudaHostAlloc(&hack, 64, cudaHostAllocMapped));
    CK(cudaHostAlloc(&hdata, 4096 * sizeof(unsigned long long), cudaHostAllocMapped));
    uint32_t *dgo, *dack;
    unsigned long long* ddata;
    CK(cudaHostGetDevicePointer(&dgo, hgo, 0));
    CK(cudaHostGetDevicePointer(&dack, hack, 0));
    CK(cudaHostGetDevicePointer(&ddata, hdata, 0));
    float* sink;
    CK(cudaMalloc(&sink, 64));
    *hgo = 0, *hack = 0;
    for (int i = 0; i < 4096; ++i) hdata[i] = 0;
    cudaStream_t cs, ks;
    CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking));
    uint32_t seq = 0;
    auto rounds = [&](int mode, int words, bool copies) -> int {
        std::vector<double> t;
        for (int r = 0; r < 300; ++r) {
            if (copies && r % 20 == 0) {
                CK(cudaMemcpyAsync(dbig, hbig, big, cudaMemcpyHostToDevice, cs));  // ~20 ms of streaming
            }
            ++seq;
            waiter<<<1, 1024, 0, ks>>>(dgo, seq, ddata, words, sink, dack, mode);
            // let the kernel start and spin
            auto t0 = std::chrono::steady_clock::now();
            while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(50)) {}
            for (int i = 0; i < words; ++i) hdata[i] = (static_cast<unsigned long long>(seq) << 32) | static_cast<uint32_t>(i);
            std::atomic_thread_fence(std::memory_order_release);
            t0 = std::chrono::steady_clock::now();
            reinterpret_cast<std::atomic<uint32_t>*>(hgo)->store(seq, std::memory_order_release);
            while (reinterpret_cast<volatile uint32_t*>(hack)[0] != seq) {}
            t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
            CK(cudaStreamSynchronize(ks));
        }
        CK(cudaStreamSynchronize(cs));
        std::sort(t.begin() + 10, t.end());
        printf("mode %d (%s%s%s) words %4d copies %d: median %.2f us, p10 %.2f, p90 %.2f\n", mode,
               mode & 4 ? "tagged" : "flag", mode & 1 ? "+read" : "", mode & 2 ? "+fence" : "", words, copies,
               t[10 + (t.size() - 10) / 2], t[10 + (t.size() - 10) / 10], t[10 + (t.size() - 10) * 9 / 10]);
        return 0;
    };
    for (int copies = 0; copies < 2; ++copies) {
        rounds(0, 0, copies);
        rounds(2, 0, copies);
        rounds(1, 2048, copies);
        rounds(3, 2048, copies);
        rounds(4, 2048, copies);
        rounds(6, 2048, copies);
    }
    return 0;
}
