#!/usr/bin/env bash
# Exercise 1: Kafka dies; orders keep coming; the outbox holds them; Kafka returns; it drains.
source "$(dirname "$0")/lib.sh"

step "The order relay's backlog gauge, before"
run ./wk metric order-relay outbox_unpublished_events

step "Kill Kafka (SIGKILL), then take 20 orders"
run ./pnpm stack kill kafka
ids=$(./wk orders 20)
echo "20 orders answered 201 while Kafka is down"
expect "the backlog grows to at least 20"
run ./wk wait-metric order-relay outbox_unpublished_events '>=' 20
expect "a send times out after about ten seconds: the relay counts a failed batch, rolls it back and retries with backoff"
run ./wk wait-metric order-relay outbox_publish_failures_total '>=' 1

step "Bring Kafka back (same data)"
back=$SECONDS
run ./pnpm stack start kafka
expect "the backlog drains to 0 and every order becomes PAID"
run ./wk wait-metric order-relay outbox_unpublished_events '==' 0
echo "order-service's outbox drained $((SECONDS - back)) s after 'stack start kafka' began"
# shellcheck disable=SC2086
run ./wk wait-orders PAID $ids
echo "every order PAID $((SECONDS - back)) s after 'stack start kafka' began"
