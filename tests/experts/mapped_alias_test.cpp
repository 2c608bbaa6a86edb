// The check of the GPU's mapping of page-locked memory (experts/mapped_alias.h) against recorded
// runtime behaviours: CUDA's unified addressing (all works), a HIP runtime on Windows that handed
// back the host address without mapping it, no mapping at all, and WDDM's batching, where a kernel
// sees a host write only once the host enters the driver.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "experts/mapped_alias.h"

namespace strata {
namespace {

// A recorded runtime: host memory is `words`; the "GPU" is a behaviour on it.
class RecordedRuntime : public MappedMemoryProbe {
public:
    enum class Behaviour {
        Coherent,            // a kernel sees host writes as they happen, and the host sees its writes
        AliasNotMapped,      // the alias is the host address, but kernels read zeros through it
        NoAlias,             // no GPU address for page-locked memory
        SeesHostOnlyInDriver,   // WDDM: host writes reach a running kernel only at the next runtime call
        HostSeesOnlyAfterSync,  // a kernel's writes reach the host only at a synchronize
    };
    explicit RecordedRuntime(Behaviour b) : behaviour_(b) {}
    ~RecordedRuntime() override { join(); }

    uint32_t* host_words() override { return words_.data(); }
    const void* device_alias() override {
        if (behaviour_ == Behaviour::NoAlias) return nullptr;
        if (behaviour_ == Behaviour::Coherent) return reinterpret_cast<const void*>(0x7f0000000000ull);  // an address of its own
        return words_.data();
    }
    std::vector<uint32_t> gpu_reads_alias() override {
        ++driver_calls;
        if (behaviour_ == Behaviour::AliasNotMapped) return std::vector<uint32_t>(kWords, 0);
        return std::vector<uint32_t>(words_.begin(), words_.end());
    }
    void gpu_waits_then_answers(uint32_t value) override {
        ++driver_calls;
        const std::atomic_ref<uint32_t> request(words_[0]);
        switch (behaviour_) {
            case Behaviour::Coherent:
                // A running kernel: polls until the host's value shows, then answers.
                kernel_ = std::thread([this, value] {
                    const std::atomic_ref<uint32_t> req(words_[0]), ans(words_[1]);
                    while (req.load(std::memory_order_acquire) != value) std::this_thread::yield();
                    ans.store(value, std::memory_order_release);
                });
                break;
            case Behaviour::SeesHostOnlyInDriver:
                // Queued now: what it sees of word 0 is what the host wrote before this call; a
                // later write reaches it at the next runtime call (synchronize).
                if (request.load(std::memory_order_acquire) == value) answer_now(value);
                else pending_ = value;
                break;
            case Behaviour::HostSeesOnlyAfterSync:
                pending_ = value;  // answered, but the answer lands only at the synchronize
                break;
            default:
                break;
        }
    }
    void synchronize() override {
        ++driver_calls;
        join();
        if (pending_) {
            const uint32_t value = *pending_;
            pending_.reset();
            if (std::atomic_ref<uint32_t>(words_[0]).load(std::memory_order_acquire) == value) answer_now(value);
        }
    }
    int driver_calls = 0;

private:
    void answer_now(uint32_t value) { std::atomic_ref<uint32_t>(words_[1]).store(value, std::memory_order_release); }
    void join() {
        if (kernel_.joinable()) kernel_.join();
    }
    Behaviour behaviour_;
    std::array<uint32_t, kWords> words_{};
    std::optional<uint32_t> pending_;
    std::thread kernel_;
};

// The positive case polls without a bound (its kernel always answers); the others give up at
// once, so no outcome depends on how fast a thread is scheduled.
constexpr uint64_t kNoBound = UINT64_MAX;
constexpr uint64_t kGiveUp = 1000;

TEST(MappedAlias, UnifiedAddressingUsesEverything) {
    RecordedRuntime runtime(RecordedRuntime::Behaviour::Coherent);
    const MappedAliasReport r = check_mapped_alias(runtime, kNoBound);
    EXPECT_TRUE(r.has_alias);
    EXPECT_FALSE(r.alias_is_host_address);
    EXPECT_TRUE(r.mapped_reads());
    EXPECT_TRUE(r.host_polling());
    EXPECT_TRUE(r.gpu_polling());
    EXPECT_EQ(r.describe(), "page-locked memory mapped into the GPU: reads, host polling and GPU polling all work");
}

TEST(MappedAlias, TheHostAddressHandedBackUnmappedTurnsItAllOff) {
    RecordedRuntime runtime(RecordedRuntime::Behaviour::AliasNotMapped);
    const MappedAliasReport r = check_mapped_alias(runtime, kGiveUp);
    EXPECT_TRUE(r.has_alias);
    EXPECT_TRUE(r.alias_is_host_address);
    EXPECT_FALSE(r.mapped_reads());
    EXPECT_FALSE(r.host_polling());
    EXPECT_FALSE(r.gpu_polling());
    EXPECT_NE(r.describe().find("(the host address itself) does not show the host's data"), std::string::npos) << r.describe();
}

TEST(MappedAlias, NoMappingMeansCopiesAndEvents) {
    RecordedRuntime runtime(RecordedRuntime::Behaviour::NoAlias);
    const MappedAliasReport r = check_mapped_alias(runtime, kGiveUp);
    EXPECT_FALSE(r.has_alias);
    EXPECT_FALSE(r.mapped_reads());
    EXPECT_EQ(runtime.driver_calls, 0);
    EXPECT_EQ(r.describe(), "page-locked memory is not mapped into the GPU: transfers are copies, waits are events");
}

TEST(MappedAlias, AHostWriteSeenOnlyInTheDriverTurnsGpuPollingOff) {
    RecordedRuntime runtime(RecordedRuntime::Behaviour::SeesHostOnlyInDriver);
    const MappedAliasReport r = check_mapped_alias(runtime, kGiveUp);
    EXPECT_TRUE(r.mapped_reads());
    EXPECT_FALSE(r.gpu_polling());  // early combine off: the host waits for the lane, then queues
    EXPECT_TRUE(r.host_polling());  // judged again by a kernel that did not have to wait
    EXPECT_NE(r.describe().find("kernels see the host's writes only once it calls the runtime"), std::string::npos) << r.describe();
}

TEST(MappedAlias, KernelWritesSeenOnlyAfterASynchronizeTurnPollingOff) {
    RecordedRuntime runtime(RecordedRuntime::Behaviour::HostSeesOnlyAfterSync);
    const MappedAliasReport r = check_mapped_alias(runtime, kGiveUp);
    EXPECT_TRUE(r.mapped_reads());
    EXPECT_FALSE(r.host_polling());
    EXPECT_FALSE(r.gpu_polling());
    EXPECT_NE(r.describe().find("the host does not see kernels' writes by polling"), std::string::npos) << r.describe();
}

TEST(MappedAlias, ACheckThatCouldNotRunUsesNothingAndSaysWhy) {
    MappedAliasReport r;
    r.unchecked_reason = "no VRAM left for 256 bytes";
    EXPECT_FALSE(r.mapped_reads());
    EXPECT_FALSE(r.host_polling());
    EXPECT_FALSE(r.gpu_polling());
    EXPECT_EQ(r.describe(), "the GPU's mapping of page-locked memory was not checked (no VRAM left for 256 bytes): transfers are "
                            "copies, waits are events");
}

}  // namespace
}  // namespace strata
