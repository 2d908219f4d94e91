# What every CLI test script starts with: sourced as `. lib.sh "$@"`, it
# sets BIN (the tools, the script's first argument), SRC (the source tree),
# VALIDATE (the JSON checker) and WORK (a folder removed at exit), and
# counts checks: pass, fail, and check NAME CMD... (CMD's status decides).
BIN=$(cd "${1:?usage: $0 BIN_DIR}" && pwd)
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VALIDATE=$SRC/tests/json/validate
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() {
  local name=$1; shift
  if "$@"; then pass "$name"; else fail "$name"; fi
}
