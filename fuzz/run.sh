#!/usr/bin/env bash
# Fuzzes rho-rpc's inbound parser (parse_line) or rho-ai's partial-JSON parser (partial_json)
# with cargo-fuzz (libFuzzer) for a fixed time, then prints the executions, the corpus size and
# the crashes found.
#
#   fuzz/run.sh [seconds]     default 300; FUZZ_TARGET (parse_line) and FUZZ_SANITIZER (none)
#                             change the rest. One process: the machines this runs on are small.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). It passes nightly-only flags to rustc; on a
# stable toolchain RUSTC_BOOTSTRAP=1 lets them through. The sanitizer defaults to none: rho-rpc
# has no unsafe code, and without one the target runs several times faster.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

budget="${1:-300}"
target="${FUZZ_TARGET:-parse_line}"
sanitizer="${FUZZ_SANITIZER:-none}"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "cargo-fuzz is not installed: cargo install cargo-fuzz" >&2
  exit 1
fi
export RUSTC_BOOTSTRAP=1

corpus="corpus/$target"
artifacts="artifacts/$target"
mkdir -p "$corpus" "$artifacts"
corpus_before=$(find "$corpus" -type f | wc -l)
crashes_before=$(find "$artifacts" -type f | wc -l)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

dict=()
if [[ -f "$target.dict" ]]; then
  dict=("-dict=$target.dict")
fi

set +e
cargo fuzz run --sanitizer "$sanitizer" "$target" "$corpus" "seeds/$target" -- \
  -max_total_time="$budget" -print_final_stats=1 "${dict[@]}" \
  >"$log" 2>&1
status=$?
set -e
# The last pulse lines and anything that looks like a failure, for the record.
grep -E '^#[0-9]+.*(pulse|DONE)|panicked|ERROR|SUMMARY|Test unit written' "$log" | tail -n 8 || true

executions=$({ grep -E '^stat::number_of_executed_units' "$log" || true; } | awk '{s += $2} END {print s + 0}')
corpus_after=$(find "$corpus" -type f | wc -l)
# libFuzzer's own count at the end (the directory also keeps inputs it has since superseded).
final=$({ grep -E '^#[0-9]+[[:space:]]+DONE' "$log" || true; } | tail -n 1 | sed -E 's/.*(cov: [0-9]+).*(corp: [^ ]+).*/\1 edges, \2/')
crashes_after=$(find "$artifacts" -type f | wc -l)
echo "target:      $target (${budget}s, sanitizer $sanitizer)"
echo "executions:  $executions"
echo "corpus:      $corpus_after files in $corpus (was $corpus_before); at the end ${final:-unknown}"
echo "crashes:     $((crashes_after - crashes_before)) new in $artifacts ($crashes_after in all)"
if [[ $status -ne 0 ]]; then
  echo "cargo fuzz exited with status $status; the log:" >&2
  tail -n 40 "$log" >&2
  exit "$status"
fi
