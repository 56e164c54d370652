#!/usr/bin/env python3
"""Fails when Swift code uses a Linux-only call outside a Linux-only branch (CI: .ci/run).

blescope is developed and tested on Linux but is meant to build on macOS too (PacketLogger's users work there). A call
that exists only in glibc or Linux (`/proc`, `posix_fadvise`, `Glibc.write`, `TIOCGWINSZ`...) compiles here and breaks
the macOS build, which CI does not run. So every such use must sit inside `#if os(Linux)` or `#if canImport(Glibc)`
(with a Darwin path in the `#else`), and every file that imports Glibc must import Darwin in its other branch.

Usage: scripts/check-portable.py [DIR...]   (default: Sources Tests Plugins)
Prints one line per problem (file:line: what) and exits 1 when there is any.
"""
import re
import sys
from pathlib import Path

# Names and text that exist only on Linux (glibc or the kernel's files). Portable POSIX (sysconf, stat, glob, readdir,
# clock_gettime, tmpfile) is not listed: Darwin has it.
LINUX_ONLY = [
    (re.compile(r"\bGlibc\."), "a Glibc-qualified call"),
    (re.compile(r'"/proc/|"/sys/'), "a /proc or /sys path"),
    (re.compile(r"\bposix_fadvise\b|\bPOSIX_FADV_"), "posix_fadvise"),
    (re.compile(r"\bTIOCGWINSZ\b"), "TIOCGWINSZ (not imported on Darwin: a macro Swift cannot read there)"),
    (re.compile(r"\bsched_(get|set)affinity\b|\bCPU_SET\b|\bget_nprocs\b"), "a glibc CPU-set call"),
    (re.compile(r"\bepoll_\w+|\binotify_\w+|\bprctl\b|\bmemfd_create\b|\beventfd\b|\bsignalfd\b"), "a Linux system call"),
    (re.compile(r"\bmalloc_trim\b|\bmallinfo2?\b|\bmalloc_usable_size\b"), "a glibc malloc extension"),
    (re.compile(r"\bO_DIRECT\b|\bMAP_POPULATE\b|\bO_TMPFILE\b"), "a Linux-only open/mmap flag"),
]
LINUX_CONDITION = re.compile(r"^\s*(os\(Linux\)|canImport\(Glibc\)|os\(Linux\)\s*\|\|\s*os\(Android\))\s*$")
DARWIN_CONDITION = re.compile(r"canImport\(Darwin\)|os\(macOS\)")


def strip_comment(line: str) -> str:
    """The code of a line without its // comment (a // inside a string literal is rare here and would only hide)."""
    in_string = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            in_string = not in_string
        if not in_string and line.startswith("//", i):
            return line[:i]
    return line


def check(path: Path) -> list[str]:
    problems = []
    # One entry per open #if: whether the branch being read is a Linux-only one.
    stack: list[bool] = []
    imports_glibc_at = None
    imports_darwin = False
    in_block_comment = False
    for number, raw in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        line = raw
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_block_comment = False
        if "/*" in line and "*/" not in line.split("/*", 1)[1]:
            in_block_comment = True
            line = line.split("/*", 1)[0]
        code = strip_comment(line).strip()
        if code.startswith("#if "):
            stack.append(bool(LINUX_CONDITION.match(code[4:])))
            continue
        if code.startswith("#elseif "):
            if stack:
                stack[-1] = bool(LINUX_CONDITION.match(code[8:]))
            continue
        if code.startswith("#else"):
            if stack:
                stack[-1] = False
            continue
        if code.startswith("#endif"):
            if stack:
                stack.pop()
            continue
        guarded = any(stack)
        if re.match(r"import\s+Glibc\b", code):
            if not guarded:
                problems.append(f"{path}:{number}: `import Glibc` outside `#if canImport(Glibc)`")
            imports_glibc_at = imports_glibc_at or number
        if re.match(r"import\s+Darwin\b", code) or (code.startswith("#elseif") and DARWIN_CONDITION.search(code)):
            imports_darwin = True
        if guarded:
            continue
        for pattern, what in LINUX_ONLY:
            if pattern.search(code):
                problems.append(f"{path}:{number}: {what} outside `#if os(Linux)` / `#if canImport(Glibc)`: {raw.strip()}")
    if imports_glibc_at and not imports_darwin:
        problems.append(f"{path}:{imports_glibc_at}: imports Glibc without a Darwin branch (`#elseif canImport(Darwin)`)")
    return problems


def main() -> int:
    roots = [Path(a) for a in sys.argv[1:]] or [Path("Sources"), Path("Tests"), Path("Plugins")]
    problems = []
    for root in roots:
        if root.is_file():
            problems += check(root)
            continue
        for path in sorted(root.rglob("*.swift")):
            problems += check(path)
    for p in problems:
        print(p)
    if problems:
        print(f"check-portable: {len(problems)} Linux-only use(s) without a Darwin path", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
