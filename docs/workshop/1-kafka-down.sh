#!/usr/bin/env bash
# Exercise 1: Kafka dies; orders keep coming; the outbox holds them; Kafka returns; it drains.
source "$(dirname "$0")/lib.sh"

step "The order relay's backlog gauge, before"
run wk metric order-relay outbox_unpublished_events

step "Kill Kafka (SIGKILL), then take 20 orders"
run ./pnpm stack kill kafka
ids=$(wk orders 20)
echo "20 orders answered 201 while Kafka is down"
expect "the backlog grows to at least 20; the relay logs one warning, not one per retry"
run wk wait-metric order-relay outbox_unpublished_events '>=' 20
run wk metric order-relay outbox_publish_failures_total

step "Bring Kafka back (same data)"
run ./pnpm stack start kafka
expect "the backlog drains to 0 and every order becomes PAID"
run wk wait-metric order-relay outbox_unpublished_events '==' 0
# shellcheck disable=SC2086
run wk wait-orders PAID $ids
