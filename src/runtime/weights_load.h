#pragma once
// How a model's file is brought in (--load). Mapped, the weights are read from the page cache's
// 4 KiB pages; read into memory on 2 MiB pages (gguf/reader.h, GgufLoad::Memory), CPU decode
// streams them faster: the hardware prefetchers stop at every 4 KiB page and the page walks go.
// On the 2-core Zen 3 development VM, 8-layer synthetic Qwen3-30B-A3B, 2 threads: tg64 42-44 tok/s
// against 35-38 mapped (bench/results/2026-11-30-huge-pages/). Auto (the default) reads into
// memory when that pays and is safe:
// - the model runs on the CPU (a GPU run reads its weights once, into VRAM; its tiered experts
//   stay mapped, page-locked for the link);
// - the kernel hands out huge pages (transparent huge pages "always" or "madvise"); without them
//   the read would cost RAM the page cache cannot share for no speed;
// - the file takes at most 3/4 of the available RAM: anonymous memory cannot be evicted as the
//   page cache can, and the KV cache and the rest need room too.
//
//   const GgufLoad load = gguf_load_for(compute, path);
//   STRATA_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(path, {}, load));

#include <cstdint>
#include <string>

#include "model/gpu/gpu_model.h"
#include "gguf/reader.h"

namespace strata {

// The decision, from its inputs (tested on hand-made cases).
GgufLoad choose_gguf_load(WeightsLoad mode, bool runs_on_cpu, bool huge_pages, uint64_t file_bytes,
                          uint64_t available_ram_bytes);

// The decision for this machine: the file's bytes (every part of a split model), MemAvailable and
// the kernel's transparent huge page setting.
GgufLoad gguf_load_for(const ComputeOptions& compute, const std::string& path);

// Whether the kernel gives this process huge pages on request (Linux transparent huge pages in
// "always" or "madvise" mode); false elsewhere.
bool transparent_huge_pages_available();

}  // namespace strata
