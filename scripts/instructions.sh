#!/usr/bin/env bash
# The happy path, and two retries at zero delay, in instructions per call,
# counted by valgrind's callgrind:
# the same count on every run of the same build, whatever else the machine
# is doing, where the timings of `cargo bench --bench overhead` drift.
#
# Builds `benches/instructions.rs` (release, as `cargo bench` does), then
# runs each variant under callgrind twice, with CALLS and 2 x CALLS calls,
# and prints (total(2 x CALLS) - total(CALLS)) / CALLS: one call and the
# loop around it, without the start-up. The last column is the difference
# from the first row of the same kind: the plain call for the happy path,
# the loop written by hand for the two retries (`-two`), async or sync.
#
# The `stream` variants read one stream of CALLS items (then 2 x CALLS):
# their figure is instructions per item, the last column the difference
# from the same source read raw (`stream-raw`; `stream-raw-ids` for
# `stream-resume`, whose items have ids): the wrapper's cost per item.
# The `tower` variant's is from `tower-plain`, the same service called
# without the retry layer. The `route` variant is the `policy` call sent
# through a route of one target (with its own statistics record): what a
# route adds.
#
# Usage: scripts/instructions.sh [VARIANT ...]   (default: all of them)
# Environment: CALLS (10000); FEATURES, tenacious's features to build with
# (`FEATURES=tracing`: what the events and spans cost when nobody listens).
# Needs valgrind.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
calls=${CALLS:-10000}
command -v valgrind > /dev/null || { echo "instructions.sh: valgrind is not installed" >&2; exit 1; }

features=()
[ -n "${FEATURES:-}" ] && features=(--features "$FEATURES")
bin=$(cd "$repo" && cargo bench --bench instructions "${features[@]}" --no-run --message-format=json 2> /dev/null |
  sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
[ -x "$bin" ] || { echo "instructions.sh: could not build benches/instructions.rs" >&2; exit 1; }

variants=("$@")
if [ ${#variants[@]} -eq 0 ]; then
  variants=(plain retry retry-unrecorded retry-named retry-named-missing retry-const policy backon tokio-retry2
    plain-sync retry-sync retry-unrecorded-sync retry-named-sync retry-const-sync policy-sync backon-sync
    loop-two policy-two backon-two tokio-retry2-two
    loop-two-sync policy-two-sync backon-two-sync
    stream-raw stream stream-timers stream-raw-ids stream-resume
    tower-plain tower route)
fi

# Total instructions of a run of variant $1 making $2 calls.
total() {
  TENACIOUS_VARIANT=$1 TENACIOUS_CALLS=$2 valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$bin" 2>&1 |
    sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}

per_call() {
  local once twice
  once=$(total "$1" "$calls")
  twice=$(total "$1" $((2 * calls)))
  echo $(((twice - once + calls / 2) / calls))
}

# A variant the binary does not know makes it panic with the list.
for variant in "${variants[@]}"; do
  TENACIOUS_VARIANT=$variant TENACIOUS_CALLS=1 "$bin" > /dev/null
done

printf '| variant | instructions per call (per item: stream*) | over the first of its kind |\n|---|---:|---:|\n'
# The first row of each kind, what the others are compared with; measured
# once, when first needed (so `instructions.sh retry` counts `plain` too).
declare -A first=()
for variant in "${variants[@]}"; do
  case $variant in
    stream-raw-ids | stream-resume) base_variant=stream-raw-ids ;;
    stream*) base_variant=stream-raw ;;
    tower*) base_variant=tower-plain ;;
    *-two-sync) base_variant=loop-two-sync ;;
    *-two) base_variant=loop-two ;;
    *-sync) base_variant=plain-sync ;;
    *) base_variant=plain ;;
  esac
  n=$(per_call "$variant")
  [ "$variant" = "$base_variant" ] && first[$base_variant]=$n
  [ -n "${first[$base_variant]:-}" ] || first[$base_variant]=$(per_call "$base_variant")
  printf '| %s | %d | %+d |\n' "$variant" "$n" $((n - first[$base_variant]))
done
