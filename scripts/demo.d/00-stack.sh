# The bed itself: rdma-core's own rping over rxe0.
rping -s -a "$ADDR" -C 3 >/dev/null 2>&1 &
server=$!
sleep 1
timeout 30 rping -c -a "$ADDR" -C 3 -V && echo "   rdma-core rping: 3 verified pings"
rc=$?
wait "$server"
exit $rc
