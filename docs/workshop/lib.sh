# Sourced by every exercise: run from the repo root, on Node 24, against $STACK_NAME (dev).
# The commands are printed as a learner types them at the repository root (`./wk …`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" != 24 ]; then
  export PATH="$PWD/.tools/bin:$PATH"
fi
export STACK_NAME="${STACK_NAME:-dev}" KAFKAJS_NO_PARTITIONER_WARNING=1

# Prints a command, then runs it: the transcript is the lesson.
run() { printf '\n$ %s\n' "$*"; "$@"; }
step() { printf '\n== %s\n' "$*"; }
expect() { printf '\n>> expected: %s\n' "$*"; }
