#!/usr/bin/env bash
# The README's commands stay true: every option an example gives one of the
# toolkit's tools (in README.md and docs/*.md, shell blocks) is one the
# tool accepts, as its --help lists it (a subcommand's and the tool's own,
# which fall through to it); and the README stays under 200 lines. No RDMA
# needed.
#
# Usage: tests/cli/readme.test.sh BIN_DIR
set -u
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
exec /usr/bin/python3 - "$BIN" "$SRC" <<'PY'
import glob, os, re, shlex, subprocess, sys

bin_dir, src = sys.argv[1], sys.argv[2]
TOOLS = ["rping", "udaddy", "mckey", "ucmatose", "ib_acme", "fabric-sweep"]
SUBCOMMANDS = {"fabric-sweep": ["report", "health", "discover"]}
ENDS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "&", "2>&1"}
help_cache = {}


def options_of(tool, sub=None):
    """The option names a tool's --help lists (a subcommand's with the tool's)."""
    key = (tool, sub)
    if key not in help_cache:
        argv = [os.path.join(bin_dir, tool)] + ([sub] if sub else []) + ["--help"]
        text = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
        names = set(re.findall(r"(?<![\w-])(--?[A-Za-z0-9][\w-]*)", text))
        if sub:
            names |= options_of(tool)
        help_cache[key] = names
    return help_cache[key]


def blocks(path):
    """The shell blocks of a Markdown file: (first line number, text)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, inside, start, buf = [], False, 0, []
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            if inside:
                out.append((start, "\n".join(buf)))
                inside, buf = False, []
            elif line.strip() in ("```sh", "```bash", "```console", "```shell"):
                inside, start = True, i + 1
            continue
        if inside:
            buf.append(line)
    return out


passed = failed = 0
files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
for path in files:
    name = os.path.relpath(path, src)
    for start, text in blocks(path):
        # Continued lines are one command; a prompt ("host$ ") is not.
        for command in re.sub(r"\\\n\s*", " ", text).split("\n"):
            command = re.sub(r"^\s*[\w.-]*\$\s+", "", command)
            try:
                words = shlex.split(command, comments=True)
            except ValueError:
                continue
            i = 0
            while i < len(words):
                tool = os.path.basename(words[i])
                if tool not in TOOLS:
                    i += 1
                    continue
                j = i + 1
                sub = words[j] if j < len(words) and words[j] in SUBCOMMANDS.get(tool, []) else None
                j += 1 if sub else 0
                known = options_of(tool, sub)
                while j < len(words) and words[j] not in ENDS and not re.match(r"^\d?[<>]", words[j]):
                    w = words[j]
                    if w.startswith("-") and len(w) > 1 and not re.match(r"^-\d", w):
                        opt = w.split("=", 1)[0]
                        what = f"{name}:{start}: {tool}{' ' + sub if sub else ''} {opt}"
                        if opt in known:
                            passed += 1
                        else:
                            failed += 1
                            print(f"FAIL: {what}: not an option of the tool")
                    j += 1
                i = j
# A newcomer reads it in five minutes: the rules live in the man pages.
readme_lines = open(files[0], encoding="utf-8").read().count("\n")
if readme_lines < 200:
    passed += 1
else:
    failed += 1
    print(f"FAIL: README.md is {readme_lines} lines; it must stay under 200 (move the rest to docs/ or a man page)")
print(f"PASS: the README's examples give their tools only options they accept, in under 200 lines ({passed} checks)" if failed == 0 else "")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
