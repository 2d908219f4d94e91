#!/usr/bin/env bash
# The report's page in headless Chromium at 6, 1,000 and 2,000 hosts (and 6
# with long names): no label clipped. A small script added to a copy of each
# page measures every label's box, the SVG's texts against their picture and
# the page, the text's elements against their own width, and writes what it
# found into the page, which Chromium's --dump-dom hands back. Synthetic
# lines (bench/sweep-lines; the big sweeps in quick rounds, which name every
# host in a few lines; five-digit names, as at 1,000 hosts the overview
# clipped them); a screenshot of the 1,000 hosts' page stays in the
# build tree.
# No RDMA needed.
#
# Usage: tests/cli/page.test.sh BIN_DIR
set -u
. "$(dirname "$0")/lib.sh" "$@"
LINES=$SRC/bench/sweep-lines
ART=$BIN/../test-artifacts
mkdir -p "$ART"

if ! command -v chromium >/dev/null; then
  fail "Chromium is not installed (scripts/install-deps)"
  exit 1
fi

chrome() {
  local profile
  profile=$(mktemp -d "$WORK/chrome.XXXXXX")
  timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1280,1000 "$@"
}

# What the page must hold: every label's box inside its picture and the
# page, and no element of text wider inside than its box.
measure='<script>
(function () {
  var found = [], box = function (r) { return [r.left, r.top, r.right, r.bottom].map(Math.round).join(","); };
  var labels = document.querySelectorAll("svg text");
  for (var i = 0; i < labels.length; ++i) {
    var r = labels[i].getBoundingClientRect(), pic = labels[i].ownerSVGElement.getBoundingClientRect();
    if (r.left < Math.max(0, pic.left) - 0.5 || r.top < Math.max(0, pic.top) - 0.5 || r.right > pic.right + 0.5 || r.bottom > pic.bottom + 0.5)
      found.push("\"" + labels[i].textContent + "\" at " + box(r) + ", its picture at " + box(pic));
  }
  var text = document.querySelectorAll("h1, h2, p, th, td, li");
  for (var k = 0; k < text.length; ++k) {
    var e = text[k];
    if (e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().left < 0)
      found.push("\"" + e.textContent.slice(0, 60) + "\" wider than its box: " + e.scrollWidth + " > " + e.clientWidth);
  }
  var out = document.createElement("pre");
  out.id = "measured";
  out.setAttribute("data-labels", labels.length);
  out.textContent = found.join("\n");
  document.body.appendChild(out);
})();
</script>'

# page NAME HOSTS [sweep-lines options]: the page of such a sweep, measured.
page() {
  local name=$1 hosts=$2
  shift 2
  "$LINES" "$hosts" "$@" -o "$WORK/$name.jsonl"
  (cd "$WORK" && timeout -k 2 60 "$BIN/fabric-sweep" report --html "$name.html" "$name.jsonl" >/dev/null 2>&1)
  if [ ! -s "$WORK/$name.html" ]; then
    fail "$name: the page of $hosts hosts not written"
    return
  fi
  MEASURE=$measure /usr/bin/python3 -c 'import os, sys; t = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(t.replace("</body>", os.environ["MEASURE"] + "</body>"))' \
    "$WORK/$name.html" "$WORK/$name.measured.html"
  chrome --dump-dom "file://$WORK/$name.measured.html" >"$WORK/$name.dom" 2>"$WORK/$name.log"
  if /usr/bin/python3 - "$WORK/$name.dom" <<'PY'; then
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="measured" data-labels="(\d+)">(.*?)</pre>', dom, re.S)
if not m:
    sys.exit("the measuring script left no finding")
if int(m.group(1)) == 0:
    sys.exit("no label on the page")
if m.group(2).strip():
    sys.exit(html.unescape(m.group(2)))
print(f"{m.group(1)} labels")
PY
    pass "$name: $hosts hosts, every label inside its picture and the page"
  else
    fail "$name: $hosts hosts, a label clipped (above)"
  fi
}

page six 6 --slow node0003
page long 6 --prefix compute-rack07-chassis12-blade --slow compute-rack07-chassis12-blade0003
page thousand 1000 --quick --prefix node0 --slow node00007 --dead node00500
chrome --screenshot="$ART/fabric-sweep-page-1000.png" "file://$WORK/thousand.html" >/dev/null 2>&1
page two-thousand 2000 --quick --prefix node0 --slow node00007 --dead node01500

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
