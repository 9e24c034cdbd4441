#!/usr/bin/env bash
# Exercise 2: a relay dies after Kafka acknowledged a batch and before it marked it published.
source "$(dirname "$0")/lib.sh"

step "Stop the order relay; one order waits in the outbox"
run ./pnpm stack stop order-relay
id=$(./wk orders 1)
event=$(./wk value orders "SELECT event_id FROM outbox_event WHERE aggregate_id = '$id'")
echo "your order: $id, its OrderCreated event: $event"
run ./wk sql orders "SELECT id, event_type, published_at FROM outbox_event WHERE aggregate_id = '$id'"

step "Run a relay that SIGKILLs itself right after Kafka's ack (the e2e suite's fault injection)"
echo "\$ E2E_FAULTS=relay-after-publish=1 DATABASE_URL=… KAFKA_BROKERS=… node e2e/src/faults/role-with-faults.ts order-service --roles relay"
status=0
database_url=$(./wk db-url orders)
brokers=$(./wk brokers)
E2E_FAULTS=relay-after-publish=1 LOG_LEVEL=warn DATABASE_URL="$database_url" KAFKA_BROKERS="$brokers" \
  node e2e/src/faults/role-with-faults.ts order-service --roles relay || status=$?
echo "relay exit status: $status (137 = SIGKILL)"
[ "$status" = 137 ]
expect "your event is on order.events once, but its outbox row is still unpublished"
run ./wk duplicates order.events "$event"
run ./wk sql orders "SELECT id, event_type, published_at FROM outbox_event WHERE aggregate_id = '$id'"

step "Start the real relay: it publishes the row again"
run ./pnpm stack start order-relay
run ./wk wait-published orders "$event"
run ./wk wait-orders PAID "$id"
expect "your event delivered twice on order.events; payment-service's inbox dropped the copy; one payment"
run ./wk duplicates order.events "$event"
./wk duplicates order.events "$event" | grep -q "delivered 2x"
run ./wk wait-metric payment-consumer inbox_duplicates_dropped_total '>=' 1
run ./wk sql payments "SELECT order_id, status FROM payments WHERE order_id = '$id'"
