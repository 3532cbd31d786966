#!/usr/bin/env bash
# Soak: plait at a steady mixed load for a long while on each store, a
# worker killed every minute and (on Redis) a failover halfway, then a
# graceful stop with work in flight. Samples memory, key count and run
# latency every 30 s and writes one table per store (README.md, "Soak").
# Not run in CI.
#
#   bench/soak.sh -for 30m                 # memory store, then Redis: about an hour
#   bench/soak.sh -for 2m                  # the short form, about 5 minutes
#   bench/soak.sh -for 30m -store redis -out bench/results/soak.md
#
# Every flag goes to the soak command: -for, -store memory,redis, -rate
# (runs/s, default 8), -workers (3), -kill-every (1m), -sample (30s), -out.
# Exits 0 when every run completed once, 3 when not.
set -euo pipefail
cd "$(dirname "$0")"
command -v redis-server >/dev/null || { echo "soak: redis-server must be on PATH" >&2; exit 1; }
bin=$(mktemp -d)/soak
go build -o "$bin" ./soak
exec "$bin" "$@"
