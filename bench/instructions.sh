#!/usr/bin/env bash
# Instruction counts per operation under valgrind's callgrind: the same for the
# same binary and inputs whatever else the machine is doing, unlike the timings.
# Each figure is (count at N iterations - count at N/5) / (4N/5), which cancels
# process start-up.   bench/instructions.sh [--anchor CERT] FILE
set -euo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/build/lib
anchor=()
if [ "${1:-}" = "--anchor" ]; then anchor=(--anchor "$2"); shift 2; fi
file=$1

count() { # mode iterations
  BENCH_ITERATIONS=$2 valgrind --tool=callgrind --callgrind-out-file=/dev/null build/bench/bench \
    "${anchor[@]}" --profile-$1 "$file" 2>&1 | sed -n 's/.*refs: *//p' | tr -d ,
}
per_op() { # mode iterations
  local high low
  high=$(count "$1" "$2"); low=$(count "$1" $(( $2 / 5 )))
  echo $(( (high - low) * 5 / ($2 * 4) ))
}
walk=$(per_op walk 500); parse=$(per_op parse 500)
warm=$(per_op warm 100); raw=$(per_op raw 25); floor=$(per_op floor 100)
# The cold figure's loop also builds (and frees) the verifier; that is set-up, not verification.
cold=$(( $(per_op cold 25) - $(per_op build 25) ))
printf '%s (instructions per operation)\n' "$(basename "$file")"
printf '  C walk %9d   parse %9d   parse/C walk %.2fx (target <= 3)\n' "$walk" "$parse" "$(echo "$parse / $walk" | bc -l)"
printf '  raw    %9d   warm  %9d   warm/raw     %.3fx (target <= 0.1)\n' "$raw" "$warm" "$(echo "$warm / $raw" | bc -l)"
printf '                    cold  %9d   cold/raw     %.2fx (target <= 1.1)\n' "$cold" "$(echo "$cold / $raw" | bc -l)"
printf '  floor  %9d   warm  %9d   warm/floor   %.3fx (target <= 1.10 in time)\n' "$floor" "$warm" "$(echo "$warm / $floor" | bc -l)"
