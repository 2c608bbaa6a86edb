#include "cli/serve_hardware_metrics.h"

#include <fmt/format.h>

#include "device/gpu_stats.h"

namespace strata::cli {

namespace {

void gauge(std::string& out, const char* name, const char* help, const char* type, const std::string& labels, double v) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{} {}\n", name, help, name, type, name, labels, v);
}

std::string expert_rows(const GpuPlacement& p) {
    if (!p.tiered || !p.stats) return {};
    GpuExpertTierStats st;
    {
        std::lock_guard lock(*p.stats_mutex);
        st = *p.stats;
    }
    std::string out;
    gauge(out, "strata_expert_uses_total", "Routed experts used, per MoE layer step", "counter", "", static_cast<double>(st.expert_uses));
    gauge(out, "strata_expert_hits_total", "Routed experts found in a VRAM cache slot", "counter", "", static_cast<double>(st.hits));
    gauge(out, "strata_expert_cpu_total", "Routed experts computed by the CPU from RAM", "counter", "", static_cast<double>(st.cpu_experts));
    gauge(out, "strata_expert_streamed_total", "Routed experts copied to VRAM and computed there", "counter", "",
          static_cast<double>(st.streamed_experts));
    gauge(out, "strata_expert_prefetched_total", "Experts copied to VRAM ahead of their layer's routing (prefetch)", "counter",
          "", static_cast<double>(st.prefetched));
    gauge(out, "strata_expert_prefetch_used_total", "Streamed expert uses served by a copy made ahead", "counter", "",
          static_cast<double>(st.prefetch_hits));
    gauge(out, "strata_expert_hit_rate", "Share of expert uses found in VRAM since start", "gauge", "", st.hit_rate());
    gauge(out, "strata_expert_streamed_bytes_total", "Expert bytes copied host to VRAM", "counter", "", static_cast<double>(st.bytes_streamed));
    gauge(out, "strata_expert_cache_slots", "VRAM cache slots of the expert tiers", "gauge", "", static_cast<double>(p.cache_slots));
    return out;
}

}  // namespace

std::function<std::string()> hardware_metrics(const GpuPlacement* placement, bool sample_gpus) {
    std::shared_ptr<GpuStatsReader> reader = sample_gpus ? std::make_shared<GpuStatsReader>() : nullptr;
    return [placement, reader] {
        std::string out = placement ? expert_rows(*placement) : std::string();
        if (!reader) return out;
        std::string used, total, util, temp, power;
        for (const GpuStatsSample& s : reader->sample()) {
            const std::string labels = fmt::format("{{gpu=\"{}\",name=\"{}\"}}", s.pci_text(), s.name);
            if (s.stats.vram_used_bytes) used += fmt::format("strata_gpu_memory_used_bytes{} {}\n", labels, *s.stats.vram_used_bytes);
            if (s.vram_total_bytes) total += fmt::format("strata_gpu_memory_total_bytes{} {}\n", labels, s.vram_total_bytes);
            if (s.stats.utilization_percent) util += fmt::format("strata_gpu_utilization_percent{} {}\n", labels, *s.stats.utilization_percent);
            if (s.stats.temperature_c) temp += fmt::format("strata_gpu_temperature_celsius{} {}\n", labels, *s.stats.temperature_c);
            if (s.stats.power_w) power += fmt::format("strata_gpu_power_watts{} {}\n", labels, *s.stats.power_w);
        }
        auto block = [&](const char* name, const char* help, const std::string& rows) {
            if (!rows.empty()) out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n{}", name, help, name, rows);
        };
        block("strata_gpu_memory_used_bytes", "GPU memory in use (all processes)", used);
        block("strata_gpu_memory_total_bytes", "GPU memory", total);
        block("strata_gpu_utilization_percent", "GPU busy share over the driver's last sample", util);
        block("strata_gpu_temperature_celsius", "GPU temperature", temp);
        block("strata_gpu_power_watts", "GPU board power", power);
        return out;
    };
}

}  // namespace strata::cli
