// Scratch: does an H2D copy stream slow a chain of tiny kernels (eager, PDL, graph) and reads of
// mapped host memory?
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void tiny(float* p) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    if (threadIdx.x == 0) p[blockIdx.x] += 1.0f;
}
__global__ void read_host(const float* h, float* d, int n) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    for (int i = threadIdx.x; i < n; i += blockDim.x) d[i] = h[i] + 1.0f;
}

__global__ void stream_read(const float4* w, size_t n4, float* out) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    float acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = w[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 12345.f) out[0] = acc;
}
__global__ void gate(const volatile int* flag, int want) {
    while (*flag != want) {}
}

int main() {
    const size_t big = 512u << 20, chunk = 1u << 20;
    void *hbig, *dbig;
    CK(cudaMallocHost(&hbig, big));
    CK(cudaMalloc(&dbig, big));
    float *dsmall, *hsmall;
    CK(cudaMalloc(&dsmall, 1 << 20));
    CK(cudaMallocHost(&hsmall, 1 << 20));
    int* hflag;
    CK(cudaMallocHost(&hflag, 64));
    *hflag = 0;
    cudaStream_t cs, ks;
    CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const int N = 400;
    float4* wbig;
    const size_t wbytes = 5u << 20;
    CK(cudaMalloc(&wbig, 64 * wbytes));
    int wi = 0;
    cudaEvent_t mid;
    CK(cudaEventCreate(&mid));
    auto launch = [&](int mode) {  // 0 plain, 1 PDL, 2 host read (plain), 5 5MB read, 6 plain + event
        if (mode == 2) { read_host<<<1, 1024, 0, ks>>>(hsmall, dsmall, 2048); return; }
        if (mode == 5) { stream_read<<<264, 512, 0, ks>>>(wbig + (wi++ % 64) * (wbytes / 16), wbytes / 16, dsmall); return; }
        if (mode == 6) { tiny<<<1, 128, 0, ks>>>(dsmall); cudaEventRecord(mid, ks); return; }
        if (mode == 0) { tiny<<<1, 128, 0, ks>>>(dsmall); return; }
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = 1; cfg.blockDim = 128; cfg.stream = ks;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at; cfg.numAttrs = 1;
        cudaLaunchKernelEx(&cfg, tiny, dsmall);
    };
    // graph of N plain kernels
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(ks, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < N; ++i) launch(0);
    CK(cudaStreamEndCapture(ks, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphUpload(ge, ks));
    cudaGraph_t g1; cudaGraphExec_t ge1;
    CK(cudaStreamBeginCapture(ks, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < N; ++i) launch(1);
    CK(cudaStreamEndCapture(ks, &g1));
    CK(cudaGraphInstantiate(&ge1, g1, 0));
    CK(cudaGraphUpload(ge1, ks));
    const char* names[] = {"eager plain", "eager PDL", "eager host-read 8KB", "graph plain", "graph PDL", "eager 5MB HBM read", "eager plain+event"};
    for (int rep = 0; rep < 3; ++rep) {
        for (int dma = 0; dma < 2; ++dma) {
            for (int mode = 0; mode < 7; ++mode) {
                CK(cudaDeviceSynchronize());
                if (dma) for (size_t off = 0; off + chunk <= big; off += chunk) CK(cudaMemcpyAsync((char*)dbig + off, (char*)hbig + off, chunk, cudaMemcpyHostToDevice, cs));
                // Queue everything behind a host-side gate so launch cost is off the clock.
                const int want = 1000 * rep + 10 * dma + mode + 1;
                gate<<<1, 1, 0, ks>>>(reinterpret_cast<volatile int*>(hflag), want);
                CK(cudaEventRecord(a, ks));
                if (mode < 3 || mode > 4) for (int i = 0; i < N; ++i) launch(mode);
                else CK(cudaGraphLaunch(mode == 3 ? ge : ge1, ks));
                CK(cudaEventRecord(b, ks));
                *reinterpret_cast<volatile int*>(hflag) = want;
                CK(cudaEventSynchronize(b));
                float ms = 0; CK(cudaEventElapsedTime(&ms, a, b));
                bool still = cudaStreamQuery(cs) == cudaErrorNotReady;
                printf("rep %d %-22s dma %d: %7.2f us per kernel (copies still running at end: %d)\n", rep, names[mode], dma, 1000.0 * ms / N, still);
                CK(cudaStreamSynchronize(cs));
            }
        }
    }
    return 0;
}
