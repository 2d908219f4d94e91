#!/usr/bin/env bash
# Installs the build into a staging prefix and checks what a user gets:
# every binary runs from its installed place, every man page renders
# without groff warnings, no binary searches the current directory for
# libraries, every completion script loads in bash and zsh and
# offers the tool's options, and cpack builds a .deb with its dependencies.
# Usage: install.test.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=$stage/usr/local
src=$(cd "$(dirname "$0")/../.." && pwd)
tools=(rping udaddy mckey ucmatose ib_acme)
failed=0
passed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

cmake --install "$build" --prefix "$prefix" >/dev/null

# What is wrong with an ELF file's RPATH/RUNPATH, if anything: an empty
# entry makes the loader search the current directory (where anyone may
# leave a library), and so does a relative one.
search_path_problem() {  # FILE
  local line paths p entries
  line=$(readelf -d "$1" | grep -E '\((RPATH|RUNPATH)\)') || return 0
  paths=${line##*[}
  paths=${paths%]}
  if [[ -z $paths || $paths == :* || $paths == *: || $paths == *::* ]]; then
    echo "empty entry in [$paths]"
    return
  fi
  IFS=: read -ra entries <<<"$paths"
  for p in "${entries[@]}"; do
    [[ $p == /* || $p == '$ORIGIN'* ]] || echo "relative entry $p in [$paths]"
  done
}
for f in "$prefix"/bin/* "$prefix"/lib*/libfabric-common.so* "$build"/bin/* "$build"/lib*/libfabric-common.so*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  problem=$(search_path_problem "$f")
  if [ -z "$problem" ]; then pass "${f#"$stage"/}: library search path"; else fail "${f#"$stage"/}: $problem"; fi
done

for tool in "${tools[@]}"; do
  bin=$prefix/bin/$tool
  page=$prefix/share/man/man1/$tool.1
  bash_comp=$prefix/share/bash-completion/completions/$tool
  zsh_comp=$prefix/share/zsh/site-functions/_$tool

  if [ -x "$bin" ] && "$bin" --version | grep -q "^$tool (fabric-toolkit) "; then
    pass "$tool: installed binary runs"
  else
    fail "$tool: installed binary runs"
  fi

  schema=$prefix/share/fabric-toolkit/schemas/$tool.schema.json
  if [ -f "$schema" ] && [ -f "$prefix/share/fabric-toolkit/schemas/common.schema.json" ] &&
     { "$bin" -j --no-such-option || true; } | FABRIC_SCHEMA_DIR=${schema%/*} "$src/tests/json/validate" >/dev/null; then
    pass "$tool: schema installed, and its output validates against the installed copy"
  else
    fail "$tool: schema installed at share/fabric-toolkit/schemas/$tool.schema.json and valid for its output"
  fi

  if [ -f "$page" ]; then
    warnings=$(groff -ww -man -Tutf8 -z "$page" 2>&1 || true)
    if [ -z "$warnings" ] && MANWIDTH=80 man -l "$page" 2>&1 >/dev/null | { ! grep -q .; }; then
      pass "$tool: man page renders cleanly"
    else
      fail "$tool: man page renders cleanly"
      echo "$warnings" | sed 's/^/    | /'
    fi
  else
    fail "$tool: man page installed at share/man/man1/$tool.1"
  fi

  # The options the binary itself reports in --help.
  mapfile -t options < <("$bin" --help | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)

  if [ -f "$bash_comp" ]; then
    offered=$(bash -c '
      source "$1"
      COMP_WORDS=("$2" "-"); COMP_CWORD=1
      complete -p "$2" >/dev/null || exit 1
      fn=$(complete -p "$2" | sed -E "s/.*-F ([^ ]+).*/\1/")
      "$fn"
      printf "%s\n" "${COMPREPLY[@]}"' _ "$bash_comp" "$tool" 2>&1) || true
    missing=()
    for o in "${options[@]}"; do grep -qxF -- "$o" <<<"$offered" || missing+=("$o"); done
    if [ ${#options[@]} -gt 0 ] && [ ${#missing[@]} -eq 0 ]; then
      pass "$tool: bash completion offers all ${#options[@]} options"
    else
      fail "$tool: bash completion offers all options (missing: ${missing[*]:-none listed})"
    fi
  else
    fail "$tool: bash completion installed"
  fi

  if [ -f "$zsh_comp" ]; then
    if zsh -fc "fpath=($prefix/share/zsh/site-functions \$fpath); autoload -Uz compinit && compinit -u -d $stage/zcompdump; autoload -Uz _$tool && whence -w _$tool >/dev/null" 2>&1 &&
       zsh -n "$zsh_comp"; then
      missing=()
      for o in "${options[@]}"; do grep -qE -- "(^|[{,'( ])$o([],}' )]|\[)" "$zsh_comp" || missing+=("$o"); done
      if [ ${#missing[@]} -eq 0 ]; then
        pass "$tool: zsh completion loads and offers all options"
      else
        fail "$tool: zsh completion offers all options (missing: ${missing[*]})"
      fi
    else
      fail "$tool: zsh completion loads"
    fi
  else
    fail "$tool: zsh completion installed"
  fi
done

# The Debian package.
debdir=$stage/deb
mkdir -p "$debdir"
if (cd "$build" && cpack -G DEB -B "$debdir" >/dev/null 2>&1); then
  deb=$(ls "$debdir"/*.deb 2>/dev/null | head -n 1)
  depends=$(dpkg-deb -f "$deb" Depends)
  contents=$(dpkg-deb -c "$deb")
  ok=1
  for dep in libibverbs1 librdmacm1 libibumad3 ibverbs-providers; do
    grep -q "$dep" <<<"$depends" || ok=0
  done
  for tool in "${tools[@]}"; do
    grep -q "\./usr/local/bin/$tool\$" <<<"$contents" || ok=0
    grep -q "\./usr/local/share/man/man1/$tool.1" <<<"$contents" || ok=0
  done
  if [ $ok -eq 1 ]; then pass "cpack builds a .deb with binaries, man pages and dependencies"; else
    fail "cpack .deb content"; echo "$depends"; echo "$contents" | sed 's/^/    | /'; fi
else
  fail "cpack -G DEB"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
