#pragma once
// The flags that choose where a model runs, shared by the commands that load one:
// `--device cpu|gpu|auto|pci:BUS-ID|UUID|ORDINAL` (auto: the largest usable discrete GPU when this
// build and machine have one and the architecture has a GPU forward, else the CPU; an identity
// names one card, matched across listings by PCI bus id — device/resolve.h) and `--ngl N`,
// llama.cpp's -ngl (spelled with two dashes: CLI11 short options are one letter). 0 runs on the
// CPU; any N > 0 puts every layer on the GPU — per-layer offload comes with the hybrid placement
// work. When a GPU is chosen, one line on stderr says which card and why. `--kv-type f16|f32|q8_0`
// sets the KV cache's element type wherever the model runs.
// `--load memory` reads the model file into RAM on huge pages instead of mapping it; `--load auto`
// (the default) does so when the model runs on the CPU and fits (runtime/weights_load.h).
// `--gpus all|LIST` with `--split layer` (the default when two or more GPUs are listed) splits
// the model's layers over several GPUs, each planned with its own memory (runtime/gpu_placement.h);
// `--split-at 24` (or 16,32) fixes the first layer of the second (third...) GPU instead of
// splitting by capacity. `--split tensor` puts every layer on every listed GPU instead, each with
// its share of the attention heads, FFN columns and experts (backend/gpu/gpu_collective.h).
// Once the card(s) are chosen, the process runs itself again with CUDA_VISIBLE_DEVICES /
// HIP_VISIBLE_DEVICES naming only them (device/self_visibility.h), unless the user set one.
//
//   DeviceFlags device;  device.add_to(app);
//   auto opts = device.options();  if (!opts) return report_failure("run", opts.status().message());
//   auto model = load_model_on(file, *opts);

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/gpu/gpu_model.h"
#include "cli/environment.h"
#include "cli/progress.h"
#include "gguf/reader.h"
#include "cli/self_rerun.h"
#include "device/resolve.h"
#include "device/self_visibility.h"

namespace strata::cli {

struct DeviceFlags {
    std::string device = "auto";
    int gpu_layers = -1;  // -1: not given
    int gpu = -1;         // -1: not given; deprecated alias of `--device N`
    std::string kv_type = "f16";
    std::string gpus;            // --gpus: empty, "all" or a list
    std::string split = "auto";  // --split: auto (layer with several GPUs), none, layer, tensor
    std::string split_at;        // --split-at: comma-separated first layers of GPUs 2..n
    std::string load = "auto";   // --load: auto, mmap or memory (runtime/weights_load.h)
    std::string ple_table = "auto";  // --ple-table: auto, map, ram or ssd (model/ple_table.h)
    bool ple_buffered = false;       // --ple-buffered: the SSD tier through the page cache

    void add_to(CLI::App& app) {
        app.add_option("--gpus", gpus,
                       "Split the model over several GPUs: all, or a comma-separated list (ordinal, pci:BUS-ID or UUID; the first takes the first layers)");
        app.add_option("--split", split,
                       "How a model is split over --gpus: layer (default with several GPUs), tensor (heads and experts "
                       "sharded, partial sums all-reduced), or none")
            ->capture_default_str();
        app.add_option("--split-at", split_at, "With --split layer: the first layer of GPU 2, 3, ... (e.g. 24 or 16,32); default: by each GPU's memory");
        app.add_option("--device", device,
                       "Where the model runs: cpu, gpu, auto, or one GPU by pci:BUS-ID, UUID (GPU-...) or runtime ordinal (`strata devices` lists them)")
            ->capture_default_str();
        app.add_option("--ngl,--n-gpu-layers", gpu_layers, "Layers on the GPU (llama.cpp's -ngl): 0 runs on the CPU, any N > 0 all");
        app.add_option("--gpu", gpu, "Deprecated: use --device N (runtime ordinal), --device pci:BUS-ID or --device UUID");
        app.add_option("--kv-type", kv_type, "KV cache type: f16, f32 or q8_0")->capture_default_str();
        app.add_option("--load", load,
                       "How the model file is read: mmap (mapped, shared with the page cache), memory (read into "
                       "RAM on huge pages: faster CPU decode, costs the read and unshared RAM) or auto (memory "
                       "when the model runs on the CPU, the kernel gives huge pages and the file takes at most "
                       "3/4 of the available RAM; else mmap)")
            ->capture_default_str();
        app.add_option("--ple-table", ple_table,
                       "qwen4exp's n-gram (PLE) table: ram (read in at load), ssd (a token's rows read from the "
                       "disk, bypassing the page cache), map (through the mapped file) or auto (the memory plan's "
                       "choice on a GPU: RAM when it has room after the experts, else the SSD; map on the CPU)")
            ->capture_default_str();
        app.add_flag("--ple-buffered", ple_buffered, "With --ple-table ssd: read through the page cache (no O_DIRECT)");
    }

    Result<ComputeOptions> options() const {
        ComputeOptions o;
        apply_environment_tuning(o);  // the STRATA_* switches, read here and nowhere below
        // One flag for both caches: an `auto` run that falls back to the CPU keeps the type asked for.
        STRATA_ASSIGN_OR_RETURN(o.kv_type, parse_kv_type(kv_type));
        if (load != "auto" && load != "mmap" && load != "memory") {
            return Status::error("--load: expected auto, mmap or memory, got {:?}", load);
        }
        o.weights_load = load == "memory" ? WeightsLoad::Memory : load == "mmap" ? WeightsLoad::Map : WeightsLoad::Auto;
        const auto ple = parse_ple_table_tier(ple_table);
        if (!ple) return Status::error("--ple-table: expected auto, map, ram or ssd, got {:?}", ple_table);
        o.ple_table.tier = *ple;
        o.ple_table.direct_io = !ple_buffered;
        o.ple_table.progress = [bar = std::shared_ptr<ProgressBar>()](uint64_t done, uint64_t total) mutable {
            if (total < (uint64_t(256) << 20)) return;
            if (!bar) bar = std::make_shared<ProgressBar>("reading the n-gram table into RAM");
            bar->update(done, total);
            if (done >= total) bar->finish(), bar.reset();
        };
        show_load_progress();  // shown only when a file is read into memory

        if (!gpus.empty()) return split_options(o);
        if (!split_at.empty()) return Status::error("--split-at: expected with --gpus (a model split over several GPUs)");
        auto kind = parse_compute_device(device);  // nullopt: an identity (pci:..., GPU-..., 1)
        if (gpu >= 0) {
            if (kind != ComputeDevice::Auto && kind != ComputeDevice::Gpu) {
                return Status::error("--gpu {} with --device {}: expected one of them, got both (--gpu is deprecated: use --device {})", gpu, device, gpu);
            }
            fmt::print(stderr, "strata: --gpu is deprecated: use --device {} (or pci:BUS-ID or a UUID, which stay put when ordinals shift)\n", gpu);
        }
        if (gpu_layers == 0 || kind == ComputeDevice::Cpu) {
            o.device = ComputeDevice::Cpu;
            return o;
        }
        if (gpu_layers > 0 && kind == ComputeDevice::Auto) kind = ComputeDevice::Gpu;
        // Without a GPU backend or device, auto and gpu keep their meaning (CPU, or the backend's
        // own error) and nothing is enumerated; an identity is still resolved, so the error lists
        // the cards that exist and why this build cannot use them.
        if (kind && !gpu_unavailable_reason().empty()) {
            o.device = *kind;
            return o;
        }
        std::string spec = gpu >= 0 ? std::to_string(gpu) : kind == ComputeDevice::Gpu ? "gpu" : device;
        const std::optional<SelfVisibility>& self = device_environment().self_rerun;
        if (self) spec = self->cards.front();  // the card the first run chose, by PCI bus id
        const MachineDevices machine = this_machine();
        STRATA_ASSIGN_OR_RETURN(ResolvedDevice r, resolve_device_flag(machine.devices, spec, machine.visibility));
        if (!r.index) {
            fmt::print(stderr, "{}\n", r.explanation);
            o.device = ComputeDevice::Cpu;
            return o;
        }
        announce(machine, {r}, self);
        // Auto keeps its fallback: an architecture without a GPU forward still runs on the CPU.
        o.device = kind == ComputeDevice::Auto ? ComputeDevice::Auto : ComputeDevice::Gpu;
        o.gpu_ordinal = *r.ordinal;
        return o;
    }

private:
    // A progress bar per file while --load memory (or auto) reads it; none for a file read in a
    // blink (under 256 MiB), which would only add a line to every small run's output.
    static void show_load_progress() {
        set_gguf_load_progress([bar = std::shared_ptr<ProgressBar>()](const std::string& path, uint64_t done,
                                                                      uint64_t total) mutable {
            if (total < (uint64_t(256) << 20)) return;
            if (!bar) bar = std::make_shared<ProgressBar>("reading " + path);
            bar->update(done, total);
            if (done >= total) {
                bar->finish();
                bar.reset();
            }
        });
    }

    // The GPUs as the runtimes will number them, with the variables they will read.
    static MachineDevices this_machine() {
        const DeviceEnvironment& env = device_environment();
        return list_this_machine(env.visibility, env.hip_sdk);
    }

    // Says which card(s) were chosen and why; in a first run, narrows the runtime to them by
    // running the process again with the visibility variable set (does not return then).
    static void announce(const MachineDevices& machine, const std::vector<ResolvedDevice>& chosen,
                         const std::optional<SelfVisibility>& self) {
        if (self) {
            for (const ResolvedDevice& r : chosen) {
                fmt::print(stderr, "strata: the runtime sees only the chosen card(s) ({}={}, set by Strata for itself): {} is GPU {} here\n",
                           self->variable, self->value, machine.devices[*r.index].pci->to_string(), *r.ordinal);
            }
            return;
        }
        const auto plan = device_environment().self_visibility_disabled
                              ? std::nullopt
                              : visibility_for_self(machine.devices, chosen, machine.visibility);
        for (size_t i = 0; i < chosen.size(); ++i) {
            const bool last = i + 1 == chosen.size();
            fmt::print(stderr, "{}{}\n", chosen[i].explanation,
                       plan && last ? fmt::format("; running again with {}={} so the runtime opens only the chosen card(s)",
                                                  plan->variable, plan->value)
                                    : std::string());
        }
        if (plan) rerun_with_visibility(*plan);
    }

    // --gpus: the listed GPUs, and the layer split over them when there are several.
    Result<ComputeOptions> split_options(ComputeOptions o) const {
        if (split != "auto" && split != "none" && split != "layer" && split != "tensor") {
            return Status::error("--split: expected layer, none or tensor, got {:?}", split);
        }
        if (split == "tensor" && !split_at.empty()) {
            return Status::error("--split-at {}: expected with --split layer (a tensor split puts every layer on every GPU)",
                                 split_at);
        }
        if (device != "auto" && device != "gpu") return Status::error("--gpus {} with --device {}: expected one of them", gpus, device);
        if (!gpu_unavailable_reason().empty()) return Status::error("--gpus {}: {}", gpus, gpu_unavailable_reason());
        const std::optional<SelfVisibility>& self = device_environment().self_rerun;
        std::string spec = gpus;
        if (self) spec = fmt::format("{}", fmt::join(self->cards, ","));  // as the first run chose them
        const MachineDevices machine = this_machine();
        STRATA_ASSIGN_OR_RETURN(std::vector<ResolvedDevice> list, resolve_gpus_flag(machine.devices, spec, machine.visibility));
        if (list.size() > 1 && split == "none") {
            fmt::print(stderr, "strata: --split none: using only the first of --gpus {}\n", gpus);
            list.resize(1);
        }
        announce(machine, list, self);
        o.device = ComputeDevice::Gpu;
        o.gpu_ordinal = *list.front().ordinal;
        if (list.size() == 1) {
            if (!split_at.empty()) return Status::error("--split-at: expected with a layer split over two or more GPUs");
            return o;
        }
        for (const ResolvedDevice& r : list) o.split_ordinals.push_back(*r.ordinal);
        o.split_tensor = split == "tensor";
        if (!split_at.empty()) {
            std::string_view rest = split_at;
            while (true) {
                const size_t comma = rest.find(',');
                const std::string item(rest.substr(0, comma));
                try {
                    size_t used = 0;
                    const long v = std::stol(item, &used);
                    if (used != item.size() || v <= 0) throw std::invalid_argument(item);
                    o.split_at.push_back(static_cast<uint32_t>(v));
                } catch (const std::exception&) {
                    return Status::error("--split-at {}: expected positive layer numbers separated by commas, got {:?}", split_at, item);
                }
                if (comma == std::string_view::npos) break;
                rest.remove_prefix(comma + 1);
            }
            if (o.split_at.size() + 1 != list.size()) {
                return Status::error("--split-at {}: expected {} layer number(s) for {} GPUs (the first layer of GPU 2 onwards)", split_at,
                                     list.size() - 1, list.size());
            }
        }
        return o;
    }
};

}  // namespace strata::cli
