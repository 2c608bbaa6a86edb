#!/usr/bin/env python3
"""Fails when a source file under src/ includes a header of a layer above its own.

The layers, lowest first, as docs/ARCHITECTURE.md describes them. A file may include headers of
its own layer and of lower ones; layers of one rank are independent of each other.

    python3 scripts/check_layers.py          # prints every violation, exit 1 if any
    python3 scripts/check_layers.py DIR      # checks the tree DIR instead of src/
"""
import pathlib
import re
import sys

# Rank of each directory under src/: the higher may include the lower.
LAYERS = {
    "core": 0,
    "gguf": 1,
    "quant": 2, "tokenizer": 2, "device": 2,
    "kv": 3,
    "backend": 4,   # ops: CPU kernels, GPU kernels, their op interfaces
    "model": 5,     # architectures: config, weights, the CPU and GPU forward passes
    "plan": 6,      # the memory plan, from a model's config and weights
    "experts": 7,   # expert tiers, lanes and caches: services the forward passes are handed
    "runtime": 8,   # sessions, generation, engine assembly
    "server": 9,
    "cli": 10,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def violations(src: pathlib.Path):
    for path in sorted(src.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".cu", ".cuh"}:
            continue
        rel = path.relative_to(src)
        own = rel.parts[0]
        if own not in LAYERS:
            yield f"{rel}: directory {own}/ has no layer in scripts/check_layers.py"
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == own or m.group(1) not in LAYERS:
                continue
            target = m.group(1)
            if LAYERS[target] >= LAYERS[own]:
                yield f"{rel}:{n}: {own}/ (layer {LAYERS[own]}) includes {target}/ (layer {LAYERS[target]}): {line.strip()}"


def main() -> int:
    src = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "src"
    found = list(violations(src))
    for v in found:
        print(v)
    if found:
        print(f"check_layers: {len(found)} include(s) against the layer order (docs/ARCHITECTURE.md)")
        return 1
    print("check_layers: no include goes up a layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
