#pragma once
// The all-reduce of a tensor split (--split tensor): each GPU ("rank") holds one part of a sum —
// its heads' share of the attention output, its experts' or FFN columns' share of the FFN
// output — and every rank needs the whole sum to go on with the same residual stream.
//
// Two implementations behind one interface:
// - NCCL (CUDA) or RCCL (HIP), loaded at run time (dlopen), so builds and machines without it
//   still run everything else: the well-tested collective, which picks NVLink / PCIe paths itself.
//   NVLink multicast (NVLS) is kept off: NCCL_NVLS_ENABLE=0 is set before the communicators exist.
// - copies: every rank copies the other ranks' parts (peer to peer when the pair allows) and adds
//   all parts in rank order. Works without the library, on one GPU listed twice (how a one-GPU
//   machine tests the split) and inside a captured graph.
// Both leave the same bits on every rank (a sum of two parts is commutative; NCCL's reduce-then-
// broadcast and our fixed order do the rest), so replicated routing decisions never diverge.
//
//   auto all = make_gpu_collective({&ctx0, &ctx1}, &error);
//   all->all_reduce_sum({part0, part1}, n * e);   // queued on each rank's stream

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/gpu/device_runtime.h"

namespace strata::gpu {

class GpuCollective {
public:
    virtual ~GpuCollective() = default;
    // parts[r] (count floats on rank r's device) becomes Σ_q parts[q] on every rank, queued on
    // each rank's stream after the work already queued there; the host does not wait.
    virtual void all_reduce_sum(std::span<float* const> parts, uint64_t count) = 0;
    // Whether a stream capture may hold it (decode steps replayed as one graph): the copies can
    // when every pair of GPUs copies directly; NCCL from 2.9 on (STRATA_NCCL_GRAPHS=0: never).
    virtual bool capturable() const = 0;
    // "NCCL 2.27.3" or "copies between GPUs": for device_name() and the logs.
    virtual std::string describe() const = 0;
};

// `which`: "nccl" (NCCL/RCCL or an error saying why not), "copies", or "auto" (the library when
// it loads and every rank is a different GPU, else copies, with one line on stderr saying why).
// The contexts must outlive the collective. STRATA_GPU_COLLECTIVE overrides `which`. Null, with
// `error` saying why, when the asked-for library cannot serve these GPUs.
std::unique_ptr<GpuCollective> make_gpu_collective(std::vector<GpuContext*> ranks, std::string* error);

// The parts (gpu_collective.cu, which sees the vendor headers): the copies collective, and the
// vendor's collective library ("NCCL" / "RCCL") with the file names to try.
std::unique_ptr<GpuCollective> make_copy_collective(std::vector<GpuContext*> ranks);
const char* collective_library_name();
std::vector<std::string> collective_library_files();

}  // namespace strata::gpu
