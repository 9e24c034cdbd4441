#!/usr/bin/env bash
# Exercise 3: remove payment-service's three layers of idempotency and let the e2e suite find
# the double charges. Needs no running stack: the scenario starts its own.
#   WORKSHOP_PATCH_CHECK_ONLY=1  only check that the patch still applies (what CI runs)
source "$(dirname "$0")/lib.sh"
patch=docs/workshop/break-idempotency.patch

step "The break: inbox key, handler check and unique constraint, all three removed"
run git apply --check "$patch"
if [ "${WORKSHOP_PATCH_CHECK_ONLY:-0}" = 1 ]; then
  echo "the patch applies to the current source"
  exit 0
fi
run git apply "$patch"
trap 'printf "\n$ git apply -R %s\n" "$patch"; git apply -R "$patch"' EXIT
run git diff --stat

step "Scenario 2 (relays killed between Kafka's ack and their commit) on the broken code"
expect "the scenario FAILS: 'order <id> has 2 payments' among the violations"
status=0
(cd e2e && npx vitest run --testTimeout=900000 test/2-relay-killed.test.ts 2>&1 | tee /tmp/workshop-3.log | grep -E 'has [0-9]+ payments|✓|×|Tests ') || true
grep -q 'has [0-9]* payments' /tmp/workshop-3.log || status=1
[ "$status" = 0 ] && echo ">> seen: the suite caught the double charges" || { echo "the suite did not report a double payment; see /tmp/workshop-3.log"; exit 1; }
