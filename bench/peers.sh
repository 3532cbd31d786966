#!/usr/bin/env bash
# The peer table: plait beside asynq, BullMQ and River on the same
# workloads, in interleaved rounds so that every figure comes from the same
# minutes of this machine, then one markdown table of the performance
# targets (peertable). Measures the committed HEAD of the repository.
#
#   bench/peers.sh [rounds]          # default 3 rounds, about 6 minutes each on 2 cores
#   QUICK=1 bench/peers.sh 1         # small sizes: a smoke run of a few minutes
#
# Needs redis-server, Go, node with npm, and PostgreSQL's server binaries
# (initdb, pg_ctl: Debian's postgresql); installs node's and Debian's
# packages when they are missing and apt-get is there. Every server runs in
# a temporary directory on a free loopback port and is stopped at the end.
# Results: bench/results/peers-<date>-<commit>/ (each harness's report and
# figures, and table.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git -C "$here" rev-parse --show-toplevel)
rounds=${1:-3}
quick=()
[ "${QUICK:-0}" = 1 ] && quick=(-quick)

need_apt() {
  command -v apt-get >/dev/null || { echo "peers.sh: $1 is missing; install it" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${@:2}" >/dev/null
}
command -v redis-server >/dev/null || need_apt redis-server redis-server
command -v node >/dev/null && command -v npm >/dev/null || need_apt node nodejs npm
if ! command -v pg_config >/dev/null || [ ! -x "$(pg_config --bindir)/initdb" ]; then
  need_apt postgresql postgresql postgresql-server-dev-all
fi

rev=$(git -C "$root" rev-parse --short HEAD)
out="$root/bench/results/peers-$(date -u +%F)-$rev"
mkdir -p "$out"
tmp=$(mktemp -d -t plaitpeers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive HEAD | tar -x -C "$tmp"
(cd "$tmp/bench" && go build -o "$tmp/plaitbench" .)
(cd "$tmp" && go test -c -o "$tmp/plait.test" .)

workloads=throughput,chain,fanout,memory
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds: plait and asynq" >&2
  (cd "$tmp/bench" && "$tmp/plaitbench" "${quick[@]}" -reps 1 -only "$workloads" -note "plait at $rev, round $r" \
    -out "$out/plait-$r.md" -json "$out/plait-$r.json" >/dev/null 2>"$out/plait-$r.log")
  echo "round $r/$rounds: BullMQ" >&2
  "$tmp/bench/peers/bullmq/run.sh" "${quick[@]/-quick/--quick}" --reps 1 --only "$workloads" \
    --out "$out/bullmq-$r.md" >/dev/null 2>/dev/null # also writes bullmq-$r.json and .log
  echo "round $r/$rounds: River" >&2
  "$tmp/bench/peers/river/run.sh" "${quick[@]}" -reps 1 -only "$workloads" \
    -out "$out/river-$r.md" -json "$out/river-$r.json" >/dev/null 2>"$out/river-$r.log"
  echo "round $r/$rounds: plait's in-memory store" >&2
  (cd "$tmp" && "$tmp/plait.test" -test.run '^$' -test.bench 'IndependentTasks/memstore/c=10' -test.benchtime 20000x >"$out/memstore-$r.txt" 2>&1)
done

{
  echo "plait at $rev, $(date -u '+%F %H:%M') UTC, $rounds round(s)${QUICK:+ (small sizes)}; machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM; redis-server $(redis-server --version | grep -o 'v=[0-9.]*' | cut -c3-), node $(node --version), PostgreSQL $(pg_config --version | awk '{print $2}'), $(go version | awk '{print $3}')."
  echo
  (cd "$root/bench" && go run ./peertable "$out")
} >"$out/table.md"
cat "$out/table.md"
echo "results in $out" >&2
