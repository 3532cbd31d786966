#!/usr/bin/env bash
# Redis's cost of plait's hot paths in redis-server instructions, counted by
# valgrind's callgrind: Submit, claim+finish (64 per call and one per call),
# chain hop, empty claim and SubmitMany, per operation, then the bytes per
# pending and per finished run. Instruction counts repeat within a few
# percent from run to run, where timings on a 2-core machine do not: these
# are the figures a performance change reports. Measures the working tree.
#
#   bench/instructions.sh                      # about a minute on 2 cores
#   bench/instructions.sh -n 0.2 -only submit,chain
#   bench/instructions.sh -json /tmp/ir.json -redis-server /path/to/redis-server
#
# Installs valgrind and redis-server with apt-get when they are missing.
# The program starts its own servers on free loopback ports, in temporary
# directories, and stops them at the end. Flags: see bench/README.md, or
# run it with -h.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

need_apt() {
  command -v apt-get >/dev/null || { echo "instructions.sh: $1 is missing; install it" >&2; exit 1; }
  echo "instructions.sh: installing $1" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || need_apt valgrind
own_server=no
for a in "$@"; do
  case $a in -redis-server|--redis-server|-redis-server=*|--redis-server=*) own_server=yes ;; esac
done
[ "$own_server" = yes ] || command -v redis-server >/dev/null || need_apt redis-server

tmp=$(mktemp -d -t plaitinstr.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
go -C "$here" build -o "$tmp/instructions" ./instructions
# In the background with INT and TERM passed on, so that a signal to this
# script too lets the program stop its servers before it exits.
"$tmp/instructions" "$@" &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null || true' INT TERM
status=0
while kill -0 "$pid" 2>/dev/null; do
  if wait "$pid"; then status=0; else status=$?; fi
done
exit "$status"
