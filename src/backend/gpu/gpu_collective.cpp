// The NCCL / RCCL all-reduce of a tensor split (gpu_collective.h), through dlopen, and the choice
// between it and the copies (gpu_collective.cu).
#include "backend/gpu/gpu_collective.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "backend/gpu/gpu_ops.h"
#include "core/status.h"
#include "device/dynamic_library.h"

namespace strata::gpu {

namespace {

// The part of the NCCL / RCCL C API used here; signatures and enum values as in nccl.h (the same
// in rccl.h, with hipStream_t for the stream).
using NcclComm = void*;
constexpr int kNcclSuccess = 0;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclSum = 0;

struct NcclApi {
    DynamicLibrary lib;
    int (*get_version)(int*) = nullptr;
    int (*comm_init_all)(NcclComm*, int, const int*) = nullptr;
    int (*comm_destroy)(NcclComm) = nullptr;
    int (*all_reduce)(const void*, void*, size_t, int, int, NcclComm, void*) = nullptr;
    int (*group_start)() = nullptr;
    int (*group_end)() = nullptr;
    const char* (*error_string)(int) = nullptr;

    // From `path`, or ("") the usual names.
    static Result<NcclApi> load(const std::string& path) {
        NcclApi api;
        std::string tried;
        if (!path.empty()) {
            api.lib = DynamicLibrary::open({path.c_str()});
            tried = path;
        } else {
            for (const std::string& name : collective_library_files()) {
                api.lib = DynamicLibrary::open({name.c_str()});
                tried += (tried.empty() ? "" : ", ") + name;
                if (api.lib.loaded()) break;
            }
        }
        if (!api.lib.loaded()) {
            return Status::error("{} is not installed or not on the library path (tried {}: {}); install it, or set "
                                 "STRATA_NCCL_LIBRARY to its file",
                                 collective_library_name(), tried, api.lib.error());
        }
        api.get_version = api.lib.symbol<decltype(api.get_version)>("ncclGetVersion");
        api.comm_init_all = api.lib.symbol<decltype(api.comm_init_all)>("ncclCommInitAll");
        api.comm_destroy = api.lib.symbol<decltype(api.comm_destroy)>("ncclCommDestroy");
        api.all_reduce = api.lib.symbol<decltype(api.all_reduce)>("ncclAllReduce");
        api.group_start = api.lib.symbol<decltype(api.group_start)>("ncclGroupStart");
        api.group_end = api.lib.symbol<decltype(api.group_end)>("ncclGroupEnd");
        api.error_string = api.lib.symbol<decltype(api.error_string)>("ncclGetErrorString");
        if (!api.get_version || !api.comm_init_all || !api.comm_destroy || !api.all_reduce || !api.group_start ||
            !api.group_end || !api.error_string) {
            return Status::error("{} ({}) lacks an entry point Strata needs (ncclCommInitAll, ncclAllReduce, "
                                 "ncclGroupStart/End): a version before 2.0?",
                                 collective_library_name(), tried);
        }
        return api;
    }
};

class NcclCollective final : public GpuCollective {
public:
    static Result<std::unique_ptr<GpuCollective>> open(std::vector<GpuContext*> ranks) {
        STRATA_ASSIGN_OR_RETURN(NcclApi api, NcclApi::load(ranks.front()->tuning().nccl_library));
        std::vector<int> devices;
        for (GpuContext* r : ranks) devices.push_back(r->device().ordinal);
        // NVLink multicast stays off (it needs fabric state that other users of the machine share,
        // and our all-reduces are small): set before the communicators read the environment.
        setenv("NCCL_NVLS_ENABLE", "0", 1);
        auto self = std::unique_ptr<NcclCollective>(new NcclCollective(std::move(api), std::move(ranks)));
        self->comms_.assign(devices.size(), nullptr);
        const int rc = self->api_.comm_init_all(self->comms_.data(), static_cast<int>(devices.size()), devices.data());
        if (rc != kNcclSuccess) {
            self->comms_.clear();
            return Status::error("{}: making communicators for GPUs {} failed: {}", collective_library_name(),
                                 fmt::format("{}", fmt::join(devices, ",")), self->api_.error_string(rc));
        }
        int version = 0;
        self->api_.get_version(&version);
        self->version_code_ = version;
        self->version_ = fmt::format("{} {}.{}.{}", collective_library_name(), version / 10000, version / 100 % 100, version % 100);
        return std::unique_ptr<GpuCollective>(std::move(self));
    }

    ~NcclCollective() override {
        for (NcclComm c : comms_) api_.comm_destroy(c);
    }

    void all_reduce_sum(std::span<float* const> parts, uint64_t count) override {
        STRATA_CHECK(parts.size() == ranks_.size(), "all_reduce_sum: one part per rank");
        // One thread drives every rank: the calls must form one group, or the first would wait
        // for ranks that have not been called yet.
        check(api_.group_start(), "ncclGroupStart");
        for (size_t r = 0; r < ranks_.size(); ++r) {
            ranks_[r]->activate();
            check(api_.all_reduce(parts[r], parts[r], count, kNcclFloat32, kNcclSum, comms_[r], ranks_[r]->stream()),
                  "ncclAllReduce");
        }
        check(api_.group_end(), "ncclGroupEnd");
    }

    // NCCL captures its collectives in stream graphs from 2.9 on (measured on 2.28: tg128 of the
    // benchmark model 228 tok/s captured against 142 eager). GpuTuning::nccl_graphs off launches
    // eagerly.
    bool capturable() const override { return version_code_ >= 20900 && ranks_.front()->tuning().nccl_graphs; }
    std::string describe() const override { return version_; }

private:
    NcclCollective(NcclApi api, std::vector<GpuContext*> ranks) : api_(std::move(api)), ranks_(std::move(ranks)) {}

    // A failed collective call after the communicators were made is a broken device or link.
    void check(int rc, const char* call) const {
        if (rc != kNcclSuccess) {
            std::fprintf(stderr, "strata: %s failed: %s\n", call, api_.error_string(rc));
            std::abort();
        }
    }

    NcclApi api_;
    std::vector<GpuContext*> ranks_;
    std::vector<NcclComm> comms_;
    std::string version_;
    int version_code_ = 0;  // major·10000 + minor·100 + patch
};

}  // namespace

namespace {

Result<std::unique_ptr<GpuCollective>> choose_collective(std::vector<GpuContext*> ranks, const std::string& which) {
    if (ranks.size() < 2 || ranks.size() > static_cast<size_t>(kGpuMaxSumParts)) {
        return Status::error("--split tensor: expected 2 to {} GPUs, got {}", kGpuMaxSumParts, ranks.size());
    }
    if (which != "auto" && which != "nccl" && which != "copies") {
        return Status::error("the tensor split's all-reduce (STRATA_GPU_COLLECTIVE): expected auto, nccl or copies, got {:?}", which);
    }
    if (which == "copies") return make_copy_collective(std::move(ranks));
    std::vector<int> ordinals;
    for (GpuContext* r : ranks) ordinals.push_back(r->device().ordinal);
    std::sort(ordinals.begin(), ordinals.end());
    const bool distinct = std::adjacent_find(ordinals.begin(), ordinals.end()) == ordinals.end();
    std::string why;
    if (distinct) {
        auto nccl = NcclCollective::open(ranks);
        if (nccl || which == "nccl") return nccl;
        why = nccl.status().message();
    } else {
        if (which == "nccl") {
            return Status::error("{} needs a different GPU for each rank of a tensor split; this split lists one GPU "
                                 "more than once",
                                 collective_library_name());
        }
        why = "one GPU is listed more than once";
    }
    std::fprintf(stderr, "strata: tensor split all-reduce by copies between GPUs, not %s: %s\n", collective_library_name(),
                 why.c_str());
    return make_copy_collective(std::move(ranks));
}

}  // namespace

std::unique_ptr<GpuCollective> make_gpu_collective(std::vector<GpuContext*> ranks, std::string* error) {
    const std::string which = ranks.empty() ? std::string("auto") : ranks.front()->tuning().collective;
    auto chosen = choose_collective(std::move(ranks), which);
    if (chosen) return std::move(*chosen);
    if (error) *error = chosen.status().message();
    return nullptr;
}

}  // namespace strata::gpu
