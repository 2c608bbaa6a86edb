#include "experts/mapped_alias.h"

#include <fmt/format.h>

#include <atomic>

#include "core/spin_wait.h"

namespace strata {
namespace {

// Distinct words, none zero, so a buffer left cleared or stale never passes.
uint32_t pattern_word(size_t i) { return 0x5a17c0deu ^ static_cast<uint32_t>(i * 0x9e3779b1u); }

}  // namespace

MappedAliasReport check_mapped_alias(MappedMemoryProbe& probe, uint64_t host_spins) {
    MappedAliasReport r;
    uint32_t* words = probe.host_words();
    const void* alias = probe.device_alias();
    if (words == nullptr || alias == nullptr) return r;
    r.has_alias = true;
    r.alias_is_host_address = alias == static_cast<const void*>(words);

    for (size_t i = 0; i < MappedMemoryProbe::kWords; ++i) words[i] = pattern_word(i);
    std::atomic_thread_fence(std::memory_order_release);
    const std::vector<uint32_t> seen = probe.gpu_reads_alias();
    r.kernels_see_host_writes = seen.size() == MappedMemoryProbe::kWords;
    for (size_t i = 0; r.kernels_see_host_writes && i < seen.size(); ++i) r.kernels_see_host_writes = seen[i] == pattern_word(i);
    if (!r.kernels_see_host_writes) return r;

    // The two directions while a kernel runs: it polls word 0 for the host's value, then answers
    // in word 1, which the host polls. Neither side calls the runtime until the answer is in (or
    // the host gives up), as the tiers' early combine and routing flags do not.
    constexpr uint32_t kValue = 0x600dcafe;
    const std::atomic_ref<uint32_t> request(words[0]), answer(words[1]);
    request.store(0, std::memory_order_relaxed);
    answer.store(0, std::memory_order_relaxed);
    probe.gpu_waits_then_answers(kValue);
    request.store(kValue, std::memory_order_release);
    bool answered = false;
    for (uint64_t spin = 0; spin < host_spins && !answered; ++spin) {
        answered = answer.load(std::memory_order_acquire) == kValue;
        if (!answered) cpu_relax();
    }
    probe.synchronize();
    // The answer came while the host polled: both directions work without the driver. After the
    // synchronize it came only because the host entered the driver (the WDDM case), which tells
    // that the kernel's poll needed it; and the host's poll then cannot be judged on its own.
    r.kernels_see_host_writes_while_running = answered;
    r.host_sees_kernel_writes_by_polling = answered;
    if (!answered && answer.load(std::memory_order_acquire) == kValue) {
        // The kernel did see the value once the driver was entered, then answered: polling by the
        // host is judged by a kernel that writes without waiting.
        answer.store(0, std::memory_order_relaxed);
        request.store(kValue, std::memory_order_release);  // already there: the kernel answers at once
        probe.gpu_waits_then_answers(kValue);
        for (uint64_t spin = 0; spin < host_spins && !r.host_sees_kernel_writes_by_polling; ++spin) {
            r.host_sees_kernel_writes_by_polling = answer.load(std::memory_order_acquire) == kValue;
            if (!r.host_sees_kernel_writes_by_polling) cpu_relax();
        }
        probe.synchronize();
    }
    return r;
}

std::string MappedAliasReport::describe() const {
    if (!unchecked_reason.empty()) {
        return fmt::format("the GPU's mapping of page-locked memory was not checked ({}): transfers are copies, waits are events",
                           unchecked_reason);
    }
    if (!has_alias) return "page-locked memory is not mapped into the GPU: transfers are copies, waits are events";
    if (!kernels_see_host_writes) {
        return fmt::format("the runtime's GPU address of page-locked memory ({}) does not show the host's data: "
                           "transfers are copies, waits are events",
                           alias_is_host_address ? "the host address itself" : "an address of its own");
    }
    if (host_polling() && gpu_polling()) return "page-locked memory mapped into the GPU: reads, host polling and GPU polling all work";
    return fmt::format("page-locked memory mapped into the GPU: reads work; {}; {}",
                       host_polling() ? "the host polls kernels' writes"
                                      : "the host does not see kernels' writes by polling: it waits on events",
                       gpu_polling() ? "kernels poll the host's writes"
                                     : "kernels see the host's writes only once it calls the runtime: the host waits for "
                                       "the CPU lane, then queues the combine");
}

}  // namespace strata
