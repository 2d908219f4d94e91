# ucmatose: 8 RC connections at once against rdma-core's server, 10
# messages each way, counted, with the per-step setup timings.
ucmatose -c 8 >/dev/null 2>&1 &
server=$!
for _ in $(seq 50); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.1; done
timeout 60 "$BIN/ucmatose" -s "$ADDR" -c 8 --stats | sed 's/^/   /'
rc=${PIPESTATUS[0]}
wait "$server"
[ "$rc" -eq 0 ] && echo "   ucmatose: 8 connections, 80 messages each way, none lost"
exit "$rc"
