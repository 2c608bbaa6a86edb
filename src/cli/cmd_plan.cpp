// `strata plan -m MODEL [--vram SIZE[,SIZE...]] [--split-at L[,L...]] [--vram-budget SIZE] [--ram SIZE]
//  [--ctx N] [--kv-type T] [--vram-reserve SIZE] [--ram-reserve SIZE] [--batch N] [--json] [--svg FILE]`:
// where every byte of the model, the KV cache and the workspaces would go, and whether it fits —
// computed from the file's metadata and tensor list alone, without loading weights or touching a GPU.
// Several --vram sizes ("24GiB,12GiB") plan the model split by layers over that many GPUs, in layer
// order: by capacity, or at --split-at (the first layer of each GPU after the first);
// --vram-budget and --vram-reserve then apply to each GPU.
// Exit status: 0 FITS, 2 DOES NOT FIT, 1 for errors (unreadable file, bad flag).
#include <fmt/format.h>

#include <optional>

#include "cli/command.h"
#include "core/file.h"
#include "gguf/reader.h"
#include "kv/kv_cache.h"
#include "model/architecture.h"
#include "plan/model_bytes.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "plan/host_ram.h"
#include "plan/units.h"

namespace strata::cli {
namespace {

struct PlanOptions {
    std::string model;
    std::string vram, vram_budget, ram, vram_reserve = "512MiB", ram_reserve = "1GiB";
    std::string split_at;
    std::string split = "layer";
    int64_t n_ctx = 4096;
    std::string kv_type = "f16";
    int64_t n_batch = 512;
    bool json = false;
    std::string svg;
};

// A size flag: empty when not given, the parse error prefixed with the flag's name.
Result<std::optional<uint64_t>> size_flag(const char* flag, const std::string& text) {
    if (text.empty()) return std::optional<uint64_t>();
    auto v = parse_byte_size(text);
    if (!v) return v.status().with_context(flag);
    return std::optional<uint64_t>(*v);
}

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> parts;
    for (size_t at = 0;;) {
        const size_t comma = text.find(',', at);
        parts.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) return parts;
        at = comma + 1;
    }
}

// --vram 24GiB,12GiB: one card per size, all of it free, named by its flag in the plan's sentences.
Result<std::vector<DeviceMemory>> split_gpus_flag(const std::string& text) {
    std::vector<DeviceMemory> gpus;
    for (const std::string& part : split_commas(text)) {
        auto size = parse_byte_size(part);
        if (!size) return size.status().with_context("--vram");
        if (*size == 0) {
            return Status::error("--vram {}: expected a size above 0 for each GPU of a layer split, got \"{}\"", text, part);
        }
        gpus.push_back(DeviceMemory{"--vram " + part, *size, *size});
    }
    return gpus;
}

Result<std::vector<uint32_t>> split_at_flag(const std::string& text) {
    std::vector<uint32_t> layers;
    for (const std::string& part : split_commas(text)) {
        if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) {
            return Status::error("--split-at: expected layer numbers separated by commas (e.g. 16,32), got \"{}\"", text);
        }
        layers.push_back(static_cast<uint32_t>(std::stoul(part)));
    }
    return layers;
}

Result<PlanRequest> build_request(const PlanOptions& o, std::vector<std::string>& notes) {
    PlanRequest req;
    if (o.vram.find(',') != std::string::npos) {
        STRATA_ASSIGN_OR_RETURN(req.split_gpus, split_gpus_flag(o.vram));
    }
    if (!o.split_at.empty()) {
        if (req.split_gpus.empty()) {
            return Status::error("--split-at {}: expected a layer split over two or more GPUs (--vram 24GiB,12GiB)",
                                 o.split_at);
        }
        STRATA_ASSIGN_OR_RETURN(req.split_at, split_at_flag(o.split_at));
    }
    if (o.split != "layer" && o.split != "tensor") {
        return Status::error("--split: expected layer or tensor, got \"{}\"", o.split);
    }
    if (o.split == "tensor") {
        if (req.split_gpus.empty()) {
            return Status::error("--split tensor: expected two or more GPUs (--vram 80GiB,80GiB)");
        }
        if (!o.split_at.empty()) return Status::error("--split-at: expected with --split layer");
        req.split_tensor = true;
    }
    STRATA_ASSIGN_OR_RETURN(auto vram, size_flag("--vram", req.split_gpus.empty() ? o.vram : std::string()));
    STRATA_ASSIGN_OR_RETURN(auto budget, size_flag("--vram-budget", o.vram_budget));
    STRATA_ASSIGN_OR_RETURN(auto ram, size_flag("--ram", o.ram));
    STRATA_ASSIGN_OR_RETURN(auto vram_reserve, size_flag("--vram-reserve", o.vram_reserve));
    STRATA_ASSIGN_OR_RETURN(auto ram_reserve, size_flag("--ram-reserve", o.ram_reserve));
    STRATA_ASSIGN_OR_RETURN(req.kv_type, parse_kv_type(o.kv_type));
    req.n_ctx = o.n_ctx;
    req.n_batch = o.n_batch;
    req.vram_reserve = vram_reserve.value_or(512 * kMiB);
    req.ram_reserve = ram_reserve.value_or(1 * kGiB);
    // Until the device layer reports real cards, the GPU is what the flags describe: --vram is the
    // card (all of it free), --vram-budget alone behaves as a card of that size.
    if (vram && *vram > 0) {
        req.gpu = DeviceMemory{"GPU (--vram)", *vram, *vram};
    } else if (!vram && req.split_gpus.empty() && budget && *budget > 0) {
        req.gpu = DeviceMemory{"GPU (--vram-budget)", *budget, *budget};
    } else if (!vram && req.split_gpus.empty()) {
        notes.push_back("no --vram given: planned for the CPU only (pass --vram SIZE to plan for a GPU)");
    }
    req.vram_budget = budget.value_or(0);
    const Result<HostRam> machine = read_host_ram();
    if (ram) {
        req.ram_bytes = *ram;
    } else {
        if (!machine) return machine.status();
        req.ram_bytes = machine->available_bytes;
    }
    // This machine's limit (Windows: half of RAM) even when --ram plans for other RAM: it is the
    // OS's, and the load will meet it.
    if (machine) req.page_lock_limit = page_lock_limit(machine->total_bytes);
    return req;
}

int run_plan(const PlanOptions& o) {
    std::vector<std::string> notes;
    auto req = build_request(o, notes);
    if (!req) return report_failure("plan", req.status().message());
    auto file = GgufFile::open(o.model);
    if (!file) return report_failure("plan", file.status().message());
    auto inventory = inventory_from_gguf(*file);
    if (!inventory) return report_failure("plan", inventory.status().message());
    auto weights = summarize_weights(*inventory);
    if (!weights) return report_failure("plan", weights.status().message());

    // An architecture without a GPU forward pass runs on the CPU whatever the flags say: plan that.
    const ArchitectureInfo& arch = architecture(inventory->config.arch);
    if (!arch.traits.gpu_forward && ((req->gpu && req->gpu->total_bytes > 0) || !req->split_gpus.empty())) {
        req->gpu.reset();
        req->split_gpus.clear();
        req->vram_budget = 0;
        notes.push_back(fmt::format("{} has no GPU forward pass yet: run and serve compute it on the CPU, so this is the "
                                    "CPU's plan (the --vram given is not used)",
                                    arch.name));
    }
    Plan plan = make_plan(*inventory, *weights, *req);
    plan.notes.insert(plan.notes.begin(), notes.begin(), notes.end());
    if (!o.svg.empty()) {
        if (Status s = write_string_to_file(o.svg, render_plan_svg(plan)); !s) {
            return report_failure("plan", s.message());
        }
    }
    if (o.json) {
        fmt::print("{}\n", plan_to_json(plan).dump(2));
    } else {
        fmt::print("{}", render_plan_text(plan));
        if (!o.svg.empty()) fmt::print("(drawn to {})\n", o.svg);
    }
    return plan.fits ? 0 : 2;
}

CommandRegistration registration(
    "plan", "Show where a model's bytes would go (VRAM, RAM, disk) and whether it fits, without loading it",
    [](CLI::App& app) {
        auto o = std::make_shared<PlanOptions>();
        app.add_option("-m,--model", o->model, "GGUF file (first part of a split model)")->required();
        app.add_option("--vram", o->vram,
                       "GPU memory, e.g. 24GiB (0 or absent: no GPU); several (24GiB,12GiB): the model split by "
                       "layers over that many GPUs");
        app.add_option("--split-at", o->split_at,
                       "With several --vram sizes: the first layer of each GPU after the first, e.g. 30 or 16,32 "
                       "(default: split by capacity)");
        app.add_option("--split", o->split,
                       "With several --vram sizes: layer (each GPU holds some layers) or tensor (each holds a part of "
                       "every layer)")
            ->capture_default_str();
        app.add_option("--vram-budget", o->vram_budget,
                       "Use at most this much VRAM (of each GPU), as if the card were this size");
        app.add_option("--ram", o->ram, "Host RAM the engine may use (default: MemAvailable of /proc/meminfo)");
        app.add_option("-c,--ctx", o->n_ctx, "Context length in tokens")->capture_default_str()->check(CLI::Range(1, 1 << 24));
        app.add_option("--kv-type", o->kv_type, "KV cache element type: f32, f16 or q8_0")->capture_default_str();
        app.add_option("--vram-reserve", o->vram_reserve, "VRAM kept free for the driver and other programs")
            ->capture_default_str();
        app.add_option("--ram-reserve", o->ram_reserve, "RAM kept free for the OS and other programs")
            ->capture_default_str();
        app.add_option("-b,--batch", o->n_batch, "Tokens per forward pass (sizes the workspaces)")
            ->capture_default_str()
            ->check(CLI::Range(1, 1 << 16));
        app.add_flag("--json", o->json, "Machine-readable output");
        app.add_option("--svg", o->svg, "Also draw the plan into this SVG file");
        return [o] { return run_plan(*o); };
    });

}  // namespace
}  // namespace strata::cli
