#!/bin/sh
# Starts the image's Kafka Connect worker: worker.properties (what every worker of the project
# shares, as the local provider runs it) plus one property per CONNECT_* variable, named the way
# Confluent's images name them: CONNECT_BOOTSTRAP_SERVERS=kafka:9092 is bootstrap.servers, and
# it may also override a shared setting. The docker provider and the compose files set them
# from connectWorkerSettings (infra/src/components/connect.ts).
set -eu

home="${OUTBOX_CONNECT_HOME:-/opt/outbox-connect}"
if [ -z "${CONNECT_BOOTSTRAP_SERVERS:-}" ]; then
  echo "error: CONNECT_BOOTSTRAP_SERVERS is not set: the Kafka brokers, e.g. kafka:9092" >&2
  exit 64
fi

config="${TMPDIR:-/tmp}/connect-distributed.properties"
{
  cat "$home/worker.properties"
  env | sed -n 's/^CONNECT_\([A-Z0-9_]*\)=.*/\1/p' | sort | while read -r name; do
    eval "value=\${CONNECT_$name}"
    printf '%s=%s\n' "$(printf '%s' "$name" | tr 'A-Z_' 'a-z.')" "$value"
  done
} >"$config"

# JVM_OPTS is a list of options: split on spaces on purpose.
# shellcheck disable=SC2086
exec java $JVM_OPTS -cp "$home/libs/*" "-Dlog4j.configuration=file:$home/log4j.properties" \
  org.apache.kafka.connect.cli.ConnectDistributed "$config"
