# mckey: two QPs join a multicast group and receive 50 datagrams each from
# our sender; then a receiver that nobody feeds ends on its own and says
# what it missed.
GROUP=239.1.2.3
"$BIN/mckey" -m "$GROUP" -b "$ADDR" -c 2 -C 50 --stats >"$FABRIC_OUT/mckey-receiver.out" 2>&1 &
receiver=$!
for _ in $(seq 100); do [ "$(grep -c '^mckey: joined' "$FABRIC_OUT/mckey-receiver.out")" -ge 2 ] && break; sleep 0.1; done
timeout 60 "$BIN/mckey" -m "$GROUP" -b "$ADDR" -s -C 50 --delay 0 >/dev/null 2>&1
rc=$?
wait "$receiver" || rc=1
grep -E '^mckey: (joined|2 QPs|join )' "$FABRIC_OUT/mckey-receiver.out" | sed 's/^/   /'
[ "$rc" -eq 0 ] || exit "$rc"
timeout 30 "$BIN/mckey" -m "$GROUP" -b "$ADDR" -C 5 --timeout 1000 2>&1 | grep -E 'lost' | sed 's/^/   no sender: /'
[ "${PIPESTATUS[0]}" -eq 1 ]
