#!/usr/bin/env bash
# Exercise 5: the same fault under each relay. Kafka is SIGKILLed while orders keep coming, first
# with the polling relay, then with the CDC relay (Debezium on Kafka Connect); the script prints
# what each showed. It leaves order-service on the polling relay, as it found it, pass or fail.
source "$(dirname "$0")/lib.sh"

connector=order-service-outbox
orders=10

# The OrderCreated events of the orders given, by event id.
events_of() {
  ./wk value orders "SELECT string_agg(event_id::text, ' ') FROM outbox_event WHERE topic = 'order.events' AND aggregate_id = ANY(string_to_array('$*', ' '))"
}

# How many of the events given are on order.events more than once (the report printed too).
duplicates() {
  local report
  report=$(./wk duplicates order.events "$@") || return 1
  printf '\n$ ./wk duplicates order.events <the events of these orders>\n%s\n' "$report" >&2
  echo "$report" | awk '/delivered more than once/ {print $1}'
}

# Starts Kafka again and waits until the relay has caught up (`$1`, a function that waits for
# it) and every order of $ids is PAID; `$2` names the relay. Sets down_for, caught_up, paid and
# duplicated for the summary, the times counted from `stack start kafka`.
bring_kafka_back() {
  local caught_up_wait=$1 relay=$2 back
  step "Bring Kafka back"
  back=$SECONDS
  down_for=$((back - down))
  run ./pnpm stack start kafka
  "$caught_up_wait"
  caught_up=$((SECONDS - back))
  # shellcheck disable=SC2086
  run ./wk wait-orders PAID $ids
  paid=$((SECONDS - back))
  echo "$relay: every order PAID $paid s after 'stack start kafka' began"
  # shellcheck disable=SC2046,SC2086
  duplicated=$(duplicates $(events_of $ids))
}

# The CDC relay's watch stopped first (it would register the connector again), then the
# connector removed with its offsets, its slot and its publication (a slot nobody reads keeps
# the WAL for ever), then the polling relay started as it was.
back_to_polling() {
  run ./pnpm stack stop order-relay
  run ./wk outbox orders cdc remove --connector "$connector" --yes
  run ./pnpm stack start order-relay --env RELAY_MODE=polling --env CONNECT_URL=
}

on_cdc=
on_exit() {
  local status=$?
  if [ "$status" != 0 ] && [ -n "$on_cdc" ]; then
    step "The exercise failed (exit status $status): back to the polling relay"
    ./pnpm stack start kafka || true
    back_to_polling || true
  fi
  exit "$status"
}
trap on_exit EXIT

step "1. The polling relay. Kill Kafka (SIGKILL), then take $orders orders"
failures_before=$(./wk metric order-relay outbox_publish_failures_total)
down=$SECONDS
run ./pnpm stack kill kafka
ids=$(./wk orders "$orders")
echo "$orders orders answered 201 while Kafka is down"
expect "the backlog is rows of outbox_event, unmarked: the gauge counts them, a SELECT finds them"
run ./wk wait-metric order-relay outbox_unpublished_events '>=' "$orders"
run ./wk sql orders "SELECT count(*) AS unpublished FROM outbox_event WHERE published_at IS NULL"
expect "the oldest row ages; each send times out after about ten seconds and is counted as a failed batch"
run ./wk wait-metric order-relay outbox_oldest_unpublished_age_seconds '>=' 10
run ./wk wait-metric order-relay outbox_publish_failures_total '>=' "$((failures_before + 1))"
polling_backlog=$(./wk metric order-relay outbox_unpublished_events)
polling_failures=$(($(./wk metric order-relay outbox_publish_failures_total) - failures_before))

backlog_drained() { run ./wk wait-metric order-relay outbox_unpublished_events '==' 0; }
bring_kafka_back backlog_drained "polling relay"
polling_down=$down_for polling_caught_up=$caught_up polling_paid=$paid polling_duplicates=$duplicated

step "2. Switch order-service to the CDC relay: Kafka Connect with Debezium (it takes a while to start)"
on_cdc=1
run ./pnpm stack add connect
run ./pnpm stack restart order-relay --env RELAY_MODE=cdc --env CONNECT_URL="$(./wk url connect)"
expect "the relay role registers the connector and watches it: slot lag instead of a backlog gauge"
run ./wk wait-metric order-relay outbox_cdc_connector_running '==' 1
printf '\n$ curl -s "$(./wk url order-relay)/metrics" | grep -E "^outbox_(unpublished|cdc)"\n'
curl -s "$(./wk url order-relay)/metrics" | grep -E '^outbox_(unpublished|cdc)'
if curl -s "$(./wk url order-relay)/metrics" | grep -q '^outbox_unpublished_events'; then
  echo "outbox_unpublished_events is still exported: is order-relay in CDC mode?" >&2
  exit 1
fi
echo "outbox_unpublished_events: not exported"

step "Kill Kafka again (SIGKILL), then take $orders orders"
down=$SECONDS
run ./pnpm stack kill kafka
ids=$(./wk orders "$orders")
echo "$orders orders answered 201 while Kafka is down"
expect "the backlog is WAL that PostgreSQL keeps for the slot: its lag grows, in seconds and bytes"
run ./wk wait-metric order-relay outbox_cdc_slot_lag_seconds '>=' 15
run ./wk sql orders "SELECT slot_name, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) AS behind_bytes FROM pg_replication_slots"
cdc_lag_seconds=$(printf '%.0f' "$(./wk metric order-relay outbox_cdc_slot_lag_seconds)")
cdc_lag_bytes=$(./wk metric order-relay outbox_cdc_slot_lag_bytes)
expect "the connector's task waits for Kafka; if it fails, the relay role restarts it"
run curl -s "$(./wk url connect)/connectors/$connector/status"
echo
cdc_task=$(curl -s "$(./wk url connect)/connectors/$connector/status" | grep -o '"state":"[A-Z]*"' | tail -1 | cut -d'"' -f4)

slot_drained() {
  expect "the slot drains: it trails by no more than its heartbeat and offset flush (a few seconds)"
  run ./wk wait-metric order-relay outbox_cdc_slot_lag_seconds '<=' 10
}
bring_kafka_back slot_drained "CDC relay"
cdc_down=$down_for cdc_caught_up=$caught_up cdc_paid=$paid cdc_duplicates=$duplicated
expect "nothing marks a row published in CDC mode: the rows it sent still look unpublished"
run ./wk sql orders "SELECT count(*) AS unpublished FROM outbox_event WHERE published_at IS NULL"
unmarked=$(./wk value orders "SELECT count(*) FROM outbox_event WHERE published_at IS NULL")

step "3. Back to the polling relay; the connector, its offsets and its slot removed"
dropped_before=$(./wk metric payment-consumer inbox_duplicates_dropped_total)
back_to_polling
on_cdc=
expect "the polling relay sends the $unmarked unmarked rows, most of them again (nothing marked what the connector sent); payment-service's inbox drops the copies"
run ./wk wait-metric order-relay outbox_unpublished_events '==' 0
run ./wk wait-metric payment-consumer inbox_duplicates_dropped_total '>=' "$((dropped_before + orders))"
slots="SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'outbox_cdc_order_service_outbox'"
run ./wk sql orders "$slots"
[ "$(./wk value orders "$slots")" = 0 ]
run ./pnpm stack stop connect

step "What you saw"
row() { printf '%-30s %-28s %s\n' "$@"; }
row '' 'polling relay' 'CDC relay'
row 'Kafka down for' "$polling_down s" "$cdc_down s"
row 'backlog while Kafka was down' "$polling_backlog rows (SELECT them)" "WAL the slot kept: $cdc_lag_bytes bytes, $cdc_lag_seconds s"
row 'failures while down' "$polling_failures failed batch(es)" "connector task: $cdc_task"
row 'caught up after start kafka' "$polling_caught_up s (gauge at 0)" "$cdc_caught_up s (slot 10 s behind or less)"
row 'every order PAID after' "$polling_paid s" "$cdc_paid s"
row 'duplicates on order.events' "$polling_duplicates of $orders" "$cdc_duplicates of $orders"
row 'rows left unmarked' '0' "$unmarked (sent again when switched back)"
echo "exercise 5 ran in $SECONDS s"
