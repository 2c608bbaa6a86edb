// `strata devices [--json] [--which] [--selftest] [--device SPEC] [--for-archs all|LIST] [--sysfs-root DIR]`:
// every GPU from every source (CUDA, HIP, NVML, KFD, DRM, PCI, Windows hipInfo and registry),
// merged by PCI bus id, with whether this build can use it and which one `--device auto` picks;
// `--selftest` checks that card's memory and copies through its runtime (device/selftest.h), then
// a tiny case of each GPU op family against its CPU reference (runtime/gpu_op_selftest.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include "cli/command.h"
#include "cli/environment.h"
#include "device/enumerate.h"
#include "device/gpu_arch.h"
#include "device/resolve.h"
#include "device/select.h"
#include "device/selftest.h"
#include "gguf/reader.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "plan/host_ram.h"
#include "plan/units.h"
#include "runtime/gpu_op_selftest.h"

namespace strata::cli {
namespace {

struct DevicesOptions {
    bool json = false;
    bool which = false;
    bool selftest = false;
    int selftest_mib = 256;
    std::string device = "auto";
    std::string for_archs;
    std::string sysfs_root;
    std::string model;  // with --selftest: also plan this model on the chosen card
};

// `--selftest -m MODEL`: the memory plan of the model on the chosen card (its total memory, less
// what others use when the driver says), or on the CPU when no card was chosen.
int print_plan(const DevicesOptions& opts, const GpuDevice* card) {
    if (opts.model.empty()) return 0;
    auto file = GgufFile::open(opts.model);
    if (!file) return report_failure("devices", file.status().message());
    auto inventory = inventory_from_gguf(*file);
    if (!inventory) return report_failure("devices", inventory.status().message());
    auto weights = summarize_weights(*inventory);
    if (!weights) return report_failure("devices", weights.status().message());
    PlanRequest req;
    if (card && card->vram_total_bytes > 0) {
        const uint64_t used = card->stats.vram_used_bytes.value_or(0);
        req.gpu = DeviceMemory{card->name, card->vram_total_bytes, card->vram_total_bytes - std::min(used, card->vram_total_bytes)};
    }
    auto ram = host_available_ram();
    req.ram_bytes = ram ? *ram : 0;
    const Plan plan = make_plan(*inventory, *weights, req);
    fmt::print("\nmemory plan of {} on {} (strata plan -m ... for other sizes):\n{}", opts.model,
               req.gpu ? card->name : std::string("the CPU"), render_plan_text(plan));
    return plan.fits ? 0 : 1;
}

std::string ordinal_text(const GpuDevice& d) {
    if (!d.runtime_ordinal) return "-";
    return fmt::format("{} {}{}", backend_name(d.vendor), *d.runtime_ordinal, d.ordinal_predicted ? "*" : "");
}

std::string free_text(const GpuDevice& d) {
    if (!d.stats.vram_used_bytes || *d.stats.vram_used_bytes > d.vram_total_bytes) return "-";
    return format_gib(d.vram_total_bytes - *d.stats.vram_used_bytes);
}

// "hip 1 0000:03:00.0 gfx1201 AMD Radeon RX 9070 XT", or "cpu": one line for scripts.
std::string which_line(const std::vector<GpuDevice>& devices, const DeviceChoice& choice) {
    if (!choice.index) return "cpu";
    const GpuDevice& d = devices[*choice.index];
    return fmt::format("{} {} {} {} {}", backend_name(d.vendor), d.runtime_ordinal ? std::to_string(*d.runtime_ordinal) : "-",
                       d.pci ? d.pci->to_string() : "-", d.arch.empty() ? "-" : d.arch, d.name.empty() ? "(unnamed)" : d.name);
}

nlohmann::ordered_json device_json(const GpuDevice& d) {
    nlohmann::ordered_json j;
    j["vendor"] = vendor_name(d.vendor);
    j["name"] = d.name;
    j["arch"] = d.arch;
    if (const AmdArchInfo* info = find_amd_arch(d.arch)) j["family"] = info->family;
    j["kind"] = kind_name(d.kind);
    j["wave_size"] = d.wave_size;
    j["compute_units"] = d.compute_units;
    j["vram_total_bytes"] = d.vram_total_bytes;
    j["vram_used_bytes"] = d.stats.vram_used_bytes ? nlohmann::ordered_json(*d.stats.vram_used_bytes) : nullptr;
    j["pci_bus_id"] = d.pci ? nlohmann::ordered_json(d.pci->to_string()) : nullptr;
    j["pci_device_id"] = fmt::format("{:04x}", d.pci_device_id);
    j["uuid"] = d.uuid;
    j["backend"] = backend_name(d.vendor);
    j["runtime_ordinal"] = d.runtime_ordinal ? nlohmann::ordered_json(*d.runtime_ordinal) : nullptr;
    j["ordinal_predicted"] = d.ordinal_predicted;
    j["kernel_driver"] = d.kernel_driver;
    j["hidden_by"] = d.hidden_by;
    auto opt = [](const auto& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); };
    j["stats"] = {{"utilization_percent", opt(d.stats.utilization_percent)}, {"temperature_c", opt(d.stats.temperature_c)},
                  {"power_w", opt(d.stats.power_w)}, {"clock_mhz", opt(d.stats.clock_mhz)}, {"pcie_generation", opt(d.stats.pcie_generation)}, {"pcie_width", opt(d.stats.pcie_width)}};
    j["sources"] = d.sources;
    j["usable"] = d.usable;
    j["reasons"] = d.reasons;
    return j;
}

void print_table(const DeviceListing& listing, const std::optional<size_t>& picked) {
    const auto& devices = listing.devices;
    struct Row {
        std::string cells[10];
    };
    std::vector<Row> rows;
    rows.push_back({{"PCI bus id", "vendor", "name", "arch", "wave", "VRAM total", "VRAM free", "runtime", "kind", "usable"}});
    for (size_t i = 0; i < devices.size(); ++i) {
        const GpuDevice& d = devices[i];
        rows.push_back({{d.pci ? d.pci->to_string() : "-", vendor_name(d.vendor), d.name.empty() ? "(unnamed)" : d.name,
                         d.arch.empty() ? "?" : d.arch, d.wave_size ? std::to_string(d.wave_size) : "-",
                         d.vram_total_bytes ? format_gib(d.vram_total_bytes) : "-", free_text(d), ordinal_text(d), kind_name(d.kind),
                         std::string(d.usable ? "yes" : "no") + (picked == i ? "  <- auto" : "")}});
    }
    size_t widths[10] = {};
    for (const Row& r : rows) {
        for (int c = 0; c < 10; ++c) widths[c] = std::max(widths[c], r.cells[c].size());
    }
    for (const Row& r : rows) {
        std::string line;
        for (int c = 0; c < 10; ++c) line += fmt::format("{:<{}}  ", r.cells[c], c == 9 ? 0 : widths[c]);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        fmt::print("{}\n", line);
    }
    bool predicted = false;
    for (const GpuDevice& d : devices) {
        predicted = predicted || d.ordinal_predicted;
        if (!d.usable) fmt::print("  {} not usable: {}\n", d.pci ? d.pci->to_string() : d.name, fmt::join(d.reasons, "; "));
    }
    for (const GpuDevice& d : devices) {
        std::vector<std::string> parts;
        if (d.stats.utilization_percent) parts.push_back(fmt::format("{:.0f}% busy", *d.stats.utilization_percent));
        if (d.stats.temperature_c) parts.push_back(fmt::format("{:.0f} C", *d.stats.temperature_c));
        if (d.stats.power_w) parts.push_back(fmt::format("{:.0f} W", *d.stats.power_w));
        if (d.stats.clock_mhz) parts.push_back(fmt::format("{:.0f} MHz", *d.stats.clock_mhz));
        if (d.stats.pcie_generation && d.stats.pcie_width) parts.push_back(fmt::format("PCIe gen{} x{}", *d.stats.pcie_generation, *d.stats.pcie_width));
        if (!d.uuid.empty()) parts.push_back(d.uuid);
        parts.push_back("from " + fmt::format("{}", fmt::join(d.sources, "+")));
        fmt::print("  {}: {}\n", d.pci ? d.pci->to_string() : d.name, fmt::join(parts, ", "));
    }
    if (predicted) fmt::print("  * HIP ordinal predicted from the KFD node order (no HIP runtime answered)\n");
}

// The card `--device` resolves to, tested through its runtime; "skipped" (exit 0) without one.
int run_selftest(const DeviceListing& listing, const DevicesOptions& opts, const VisibilityVariables& visibility) {
    auto chosen = resolve_device_flag(listing.devices, opts.device, visibility);
    if (!chosen) return report_failure("devices", chosen.status().message());
    if (!chosen->index) {
        fmt::print("selftest skipped: no usable GPU\n{}\n", chosen->explanation);
        return print_plan(opts, nullptr);
    }
    const GpuDevice& card = listing.devices[*chosen->index];
    if (!opts.sysfs_root.empty()) {
        fmt::print("selftest skipped: --sysfs-root lists files, not a runtime to test\n{}\n", chosen->explanation);
        return print_plan(opts, &card);
    }
    fmt::print("{}\n", chosen->explanation);
    auto api = open_gpu_memory_api(chosen->vendor, *chosen->ordinal);
    if (!api) return report_failure("devices", "selftest: " + api.status().message());
    fmt::print("selftest through the {}:\n", (*api)->description());
    SelftestOptions so;
    so.copy_bytes = static_cast<size_t>(opts.selftest_mib) << 20;
    SelftestReport report = run_memory_selftest(**api, so);
    for (const SelftestCheck& c : report.checks) fmt::print("  {:<4}  {}: {}\n", c.passed ? "ok" : "FAIL", c.name, c.detail);
    fmt::print("GPU ops against their CPU reference (normalized mean squared error):\n");
    std::fflush(stdout);  // a launch the runtime rejects aborts the process: keep what was printed
    const GpuOpSelftestReport ops = run_gpu_op_selftest({.ordinal = *chosen->ordinal, .runtime = backend_name(chosen->vendor)});
    if (!ops.ran) fmt::print("  {:<4}  GPU ops: {}\n", "skip", ops.skipped_reason);
    for (const GpuOpCheck& c : ops.checks) fmt::print("  {:<4}  {}: {}\n", c.passed ? "ok" : "FAIL", c.name, c.detail);
    const bool passed = report.passed() && ops.passed();
    fmt::print("{}\n", passed ? "selftest passed" : "selftest FAILED");
    if (!passed) return 1;
    return print_plan(opts, &card);
}

int run_devices(const DevicesOptions& opts) {
    EnumerateOptions eo;
    eo.visibility = device_environment().visibility;
    eo.hip_sdk = device_environment().hip_sdk;
    if (!opts.sysfs_root.empty()) {
        eo.sysfs_root = opts.sysfs_root;
        eo.probe_runtimes = false;  // a fake tree stands for the whole machine
    }
    if (opts.for_archs.empty()) {
        eo.classify.archs = compiled_gpu_archs();
        eo.classify.archs_origin = "this build";
    } else {
        eo.classify.archs = opts.for_archs == "all" ? ArchSet::all_buildable() : ArchSet::parse(opts.for_archs);
        eo.classify.archs_origin = "--for-archs " + opts.for_archs;
    }
    DeviceListing listing = enumerate_devices(eo);
    if (opts.selftest) return run_selftest(listing, opts, eo.visibility);
    auto choice = select_device(listing.devices, opts.device);

    if (opts.which) {
        if (!choice) return report_failure("devices", choice.status().message());
        fmt::print("{}\n", which_line(listing.devices, *choice));
        return 0;
    }
    std::optional<size_t> picked;
    if (choice) picked = choice->index;
    if (opts.json) {
        nlohmann::ordered_json j;
        j["archs_considered"] = eo.classify.archs.to_string();
        j["archs_origin"] = eo.classify.archs_origin;
        auto runtimes = nlohmann::ordered_json::array();
        for (const auto& r : listing.runtimes)
            runtimes.push_back({{"name", r.name}, {"loaded", r.loaded}, {"version", r.version}, {"status", r.status}});
        j["runtimes"] = runtimes;
        auto devs = nlohmann::ordered_json::array();
        for (const auto& d : listing.devices) devs.push_back(device_json(d));
        j["devices"] = devs;
        j["selection"] = {{"device", opts.device},
                          {"ok", choice.is_ok()},
                          {"index", picked ? nlohmann::ordered_json(*picked) : nullptr},
                          {"which", choice ? which_line(listing.devices, *choice) : ""},
                          {"why", choice ? choice->why : choice.status().message()}};
        fmt::print("{}\n", j.dump(2));
        return 0;
    }
    for (const auto& r : listing.runtimes) fmt::print("{}{}: {}\n", r.name, r.version.empty() ? "" : " " + r.version, r.status);
    fmt::print("GPU archs considered ({}): {}\n\n", eo.classify.archs_origin, eo.classify.archs.to_string());
    if (listing.devices.empty()) {
        fmt::print("No GPU found{}: Strata will run on the CPU.\n", opts.sysfs_root.empty() ? "" : " under " + opts.sysfs_root);
        return 0;
    }
    print_table(listing, picked);
    fmt::print("\n");
    // The same line `run` and the other model-loading commands print for this --device.
    auto resolved = resolve_device_flag(listing.devices, opts.device, eo.visibility);
    fmt::print("{}\n", resolved ? resolved->explanation : resolved.status().message());
    return 0;
}

static CommandRegistration reg("devices", "List every GPU, whether Strata can use it, and which one it would pick", [](CLI::App& app) {
    auto opts = std::make_shared<DevicesOptions>();
    app.add_flag("--json", opts->json, "Print the listing as JSON");
    app.add_flag("--which", opts->which,
                 "Print one line for the device Strata would use: '<backend> <ordinal> <pci-bus-id> <arch> <name>', or 'cpu'");
    app.add_flag("--selftest", opts->selftest,
                 "Test the card --device picks through its runtime: memory, alignment, over-allocation, copy round trips and bandwidth, "
                 "then each GPU op family against the CPU");
    app.add_option("-m,--model", opts->model, "With --selftest: also print this model's memory plan on the card");
    app.add_option("--selftest-mib", opts->selftest_mib, "MiB per copy round trip of --selftest")->capture_default_str()->check(CLI::Range(1, 65536));
    app.add_option("--device", opts->device, "Selection to resolve: auto, gpu, cpu, pci:BUS-ID, a UUID, an ordinal (N, cuda:N, hip:N) or a name fragment")
        ->capture_default_str();
    app.add_option("--for-archs", opts->for_archs, "Answer as if the build had these GPU archs: 'all' or a list like 'sm_90,gfx1201'");
    app.add_option("--sysfs-root", opts->sysfs_root, "Read the Linux sysfs tree under DIR instead of / and ask no runtime (for tests)");
    return [opts] { return run_devices(*opts); };
});

}  // namespace
}  // namespace strata::cli
