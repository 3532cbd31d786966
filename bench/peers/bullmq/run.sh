#!/usr/bin/env bash
# BullMQ on the plait bench workloads. Starts its own redis-server on a free
# loopback port in a temporary directory, runs bench.js against it, stops it.
#
#   ./run.sh --quick                       # small sizes, 1 repetition (about a minute)
#   ./run.sh                               # full run, 3 repetitions
#   ./run.sh --out results/$(date +%F).md  # also write the report to a file
#   ./run.sh --only chain,fanout --reps 1  # other flags go to bench.js (see README.md)
set -euo pipefail
cd "$(dirname "$0")"

out=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

command -v redis-server >/dev/null || { echo "run.sh: redis-server not on PATH" >&2; exit 1; }
command -v node >/dev/null || { echo "run.sh: node not on PATH" >&2; exit 1; }
if [ ! -d node_modules/bullmq ] || [ ! -d node_modules/ioredis ]; then
  npm ci --no-audit --no-fund >&2 || npm install --no-audit --no-fund --no-save --no-package-lock >&2
fi

tmp=$(mktemp -d -t bullmqbench.XXXXXX)
rpid=""
cleanup() {
  if [ -n "$rpid" ] && kill -0 "$rpid" 2>/dev/null; then
    kill "$rpid" 2>/dev/null || true
    wait "$rpid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free loopback port: bind port 0, read the port the kernel gave, release it.
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
  --dir "$tmp" --logfile "$tmp/redis.log" --daemonize no &
rpid=$!
for _ in $(seq 1 200); do
  if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then break; fi
  if ! kill -0 "$rpid" 2>/dev/null; then echo "run.sh: redis-server exited:" >&2; cat "$tmp/redis.log" >&2; exit 1; fi
  sleep 0.05
done
echo "scratch redis-server pid $rpid on 127.0.0.1:$port" >&2

cmd="./run.sh${args[*]:+ ${args[*]}}"
# The report goes to stdout; the progress lines (one per workload and
# repetition, the raw figures behind the medians) to stderr. With --out FILE
# (FILE ending in .md), also FILE.md, the progress log as FILE.log and every
# repetition's figures as FILE.json.
json=()
if [ -n "$out" ]; then json=(--json "$tmp/report.json"); fi
node bench.js --port "$port" --cmd "$cmd" ${json[@]+"${json[@]}"} ${args[@]+"${args[@]}"} 2>&1 >"$tmp/report.md" |
  tee "$tmp/progress.log" >&2
cat "$tmp/report.md"
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  cp "$tmp/report.md" "$out"
  cp "$tmp/progress.log" "${out%.md}.log"
  cp "$tmp/report.json" "${out%.md}.json"
  echo "report written to $out, progress log to ${out%.md}.log, raw figures to ${out%.md}.json" >&2
fi
