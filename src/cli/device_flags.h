#pragma once
// The flags that choose where a model runs, shared by `run`, `bench` and `parity`:
// `--device cpu|gpu|auto` (auto: the GPU when this build and machine have one and the
// architecture has a GPU forward, else the CPU) and `--ngl N`, llama.cpp's -ngl (spelled with
// two dashes: CLI11 short options are one letter). 0 runs on the CPU; any N > 0 puts every layer
// on the GPU — per-layer offload comes with the hybrid placement work.
//
//   DeviceFlags device;  device.add_to(app);
//   auto opts = device.options();  if (!opts) return report_failure("run", opts.status().message());
//   auto model = load_model_on(file, *opts);

#include <CLI/CLI.hpp>

#include <string>

#include "backend/gpu/gpu_model.h"

namespace strata::cli {

struct DeviceFlags {
    std::string device = "auto";
    int gpu_layers = -1;  // -1: not given
    int gpu = 0;
    std::string kv_type = "f16";

    void add_to(CLI::App& app) {
        app.add_option("--device", device, "Where the model runs: cpu, gpu or auto")->capture_default_str();
        app.add_option("--ngl,--n-gpu-layers", gpu_layers, "Layers on the GPU (llama.cpp's -ngl): 0 runs on the CPU, any N > 0 all");
        app.add_option("--gpu", gpu, "GPU ordinal of the runtime")->capture_default_str();
        app.add_option("--kv-type", kv_type, "GPU KV cache type: f16 or f32")->capture_default_str();
    }

    Result<ComputeOptions> options() const {
        ComputeOptions o;
        auto d = parse_compute_device(device);
        if (!d) return Status::error("--device: expected cpu, gpu or auto, got {:?}", device);
        o.device = *d;
        if (gpu_layers == 0) o.device = ComputeDevice::Cpu;
        if (gpu_layers > 0) o.device = ComputeDevice::Gpu;
        if (kv_type != "f16" && kv_type != "f32") return Status::error("--kv-type: expected f16 or f32, got {:?}", kv_type);
        o.kv_f16 = kv_type == "f16";
        o.gpu_ordinal = gpu;
        return o;
    }
};

}  // namespace strata::cli
