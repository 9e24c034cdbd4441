#!/usr/bin/env bash
# Exercise 3: remove payment-service's layers of idempotency and let the e2e suite find what
# breaks. Needs no running stack: the scenario starts its own.
#   (no argument)   all three defences removed: the suite must report double charges
#   --keep-unique   the UNIQUE on payments.order_id kept: no double charge, a stuck order instead
#   WORKSHOP_PATCH_CHECK_ONLY=1  only check that both variants of the patch still apply
source "$(dirname "$0")/lib.sh"
patch=docs/workshop/break-idempotency.patch
migration=services/payment-service/src/database/migrations.ts
variant=${1:-all}
case "$variant" in
  all | --keep-unique) ;;
  *) echo "usage: $0 [--keep-unique]" >&2; exit 2 ;;
esac

if [ "$variant" = all ]; then
  step "The break: inbox key, handler check and unique constraint, all three removed"
else
  step "The break: inbox key and handler check removed, the unique constraint kept"
fi
run git apply --check "$patch"
run git apply --check --exclude="$migration" "$patch"
if [ "${WORKSHOP_PATCH_CHECK_ONLY:-0}" = 1 ]; then
  echo "the patch applies to the current source, with and without its migration hunk"
  exit 0
fi
if [ "$variant" = all ]; then
  run git apply "$patch"
  trap 'printf "\n$ git apply -R %s\n" "$patch"; git apply -R "$patch"' EXIT
else
  run git apply --exclude="$migration" "$patch"
  trap 'printf "\n$ git apply -R --exclude=%s %s\n" "$migration" "$patch"; git apply -R --exclude="$migration" "$patch"' EXIT
fi
run git diff --stat

log=$(mktemp "${TMPDIR:-/tmp}/workshop-3.XXXXXX")
step "Scenario 2 (relays killed between Kafka's ack and their commit) on the broken code"
if [ "$variant" = all ]; then
  expect "the scenario FAILS: 'order <id> has 2 payments' among the violations"
else
  expect "the scenario FAILS without a double charge: an inbox row refused by the UNIQUE constraint goes dead"
fi
printf '\n$ (cd e2e && npx vitest run test/2-relay-killed.test.ts)\n'
(cd e2e && npx vitest run --testTimeout=900000 test/2-relay-killed.test.ts 2>&1) > "$log" || true
{ grep -E 'has [0-9]+ payments|did not settle|✓|×|Tests ' "$log" || true; } | sort -u | head -20 || true
echo "(the whole run: $log)"

if [ "$variant" = all ]; then
  grep -qE 'has [0-9]+ payments' "$log" || { echo "the suite did not report a double payment"; exit 1; }
  echo ">> seen: the suite caught the double charges"
else
  if grep -qE 'has [0-9]+ payments' "$log"; then echo "an order was charged twice"; exit 1; fi
  # Whether the order gets stuck depends on the run: only a later event of the same order (a
  # cancel) waits behind the dead row. Either way the dead row and its error are reported.
  if grep -qE 'did not settle.*inbox: [0-9]+ rows dead, [0-9]+ being retried, last error: .*(duplicate key|unique)' "$log"; then
    how="its order is stuck behind it (the system did not settle)"
  elif grep -qE '[0-9]+ dead inbox rows, expected 0 \(last error: .*(duplicate key|unique)' "$log"; then
    how="no later event of its order waited behind it, so every order settled and the invariants name the dead row"
  else
    echo "the scenario did not fail on an inbox row the UNIQUE constraint refuses"; exit 1
  fi
  echo ">> seen: nobody was charged twice; the UNIQUE constraint refused the copy's payment, every attempt, until its inbox row went dead"
  echo ">> this run: $how"
fi
