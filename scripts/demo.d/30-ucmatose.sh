# ucmatose: 20 RC connections set up, used (10 messages each way) and torn down.
"$BIN/ucmatose" -c 20 >/dev/null 2>&1 &
server=$!
for _ in $(seq 100); do rdma resource show cm_id 2>/dev/null | grep -q "LISTEN .*:7471 " && break; sleep 0.1; done
timeout 60 "$BIN/ucmatose" -s "$ADDR" -c 20 --stats | grep -vE '^(cmatose|receiving|sending|data|test complete)' | sed 's/^/   /'
rc=${PIPESTATUS[0]}
wait "$server"
exit "$rc"
