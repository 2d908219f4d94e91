# rping: our client against our server, 200 verified pings, latency summary.
"$BIN/rping" -s -a "$ADDR" -S 1024 >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7174 " && break; sleep 0.1; done
timeout 60 "$BIN/rping" -c -a "$ADDR" -C 200 -S 1024 -V --stats | sed 's/^/   /'
rc=${PIPESTATUS[0]}
wait "$server"
[ "$rc" -eq 0 ] && echo "   rping: 200 pings of 1024 bytes verified"
exit "$rc"
