#!/usr/bin/env bash
# The bed itself: rxe0 is active and rdma-core's own tools work over it.
. "$(dirname "$0")/lib.sh" "$@"

check "rxe0 is PORT_ACTIVE" bash -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'

start_bg srv "$ORIG/rping" -s -a "$ADDR" -C 10
check "rdma_cm listener visible" wait_cm_listen 7174
expect_rc 0 "rdma-core rping -c -V -C 10" "$ORIG/rping" -c -a "$ADDR" -C 10 -V
expect_bg srv 0 "rdma-core rping -s ends cleanly"

start_bg srv "$ORIG/udaddy"
wait_cm_listen 7174
expect_rc 0 "rdma-core udaddy" "$ORIG/udaddy" -s "$ADDR"
expect_bg srv 0 "rdma-core udaddy server ends cleanly"

start_bg srv "$ORIG/ucmatose"
wait_cm_listen 7471
expect_rc 0 "rdma-core ucmatose" "$ORIG/ucmatose" -s "$ADDR"
expect_bg srv 0 "rdma-core ucmatose server ends cleanly"

finish
