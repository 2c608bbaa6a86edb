#!/usr/bin/env python3
"""Fails when a source file under src/ reads the process environment anywhere but the command
line's edge, src/cli/environment.cpp (docs/ARCHITECTURE.md, "Configuration is passed in"):
behaviour comes from what the caller passes in, never from hidden global state read deep inside.

    python3 scripts/check_environment_reads.py          # prints every read, exit 1 if any
    python3 scripts/check_environment_reads.py DIR      # checks the tree DIR instead of src/
"""
import pathlib
import re
import sys

EDGE = pathlib.PurePosixPath("cli/environment.cpp")
# getenv and its relatives (secure_getenv, _wgetenv, _dupenv_s, GetEnvironmentVariable) and the
# environ array; comments are skipped.
READ = re.compile(r"\b(secure_getenv|_?w?getenv|_w?dupenv_s|GetEnvironmentVariable[AW]?|environ)\b")


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent / "src")
    bad = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".cu", ".cuh"} or not path.is_file():
            continue
        rel = pathlib.PurePosixPath(path.relative_to(root).as_posix())
        if rel == EDGE:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            if READ.search(code):
                bad.append(f"{rel}:{number}: reads the environment; read it in {EDGE} and pass it in")
    print("\n".join(bad) if bad else f"check_environment_reads: only {EDGE} reads the environment")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
