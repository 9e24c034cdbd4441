#!/usr/bin/env bash
# Exercise 4: the forbidden "send after commit" (R-DIST-OBX-X2) next to the outbox, same outage.
source "$(dirname "$0")/lib.sh"

step "Kill Kafka; write 5 orders the naive way and 5 through the outbox"
run ./pnpm stack kill kafka
echo; echo '$ ./wk naive-after-commit 5'
naive=$(./wk naive-after-commit 5)
echo "$naive"
naive_ids=$(echo "$naive" | awk '/naive order/ {print $3}')
ids=$(./wk orders 5)
echo "5 outbox orders answered 201"

step "Bring Kafka back"
run ./pnpm stack start kafka
# shellcheck disable=SC2086
run ./wk wait-orders PAID $ids
expect "the 5 outbox orders are PAID; the 5 naive orders are in their table and their events are gone for good"
# shellcheck disable=SC2086
run ./wk naive-report $naive_ids
./wk naive-report $naive_ids | grep -q ', 5 without an event (lost)'
