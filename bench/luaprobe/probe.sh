#!/usr/bin/env bash
# What one Lua operation or one redis.call costs redis-server, counted in
# instructions by callgrind: each function of probe.lua (or of the library
# given with -lib) called N times by redis-benchmark, less the cost of an
# FCALL that does nothing. The unit costs docs/performance.md quotes come
# from here.
#
#   bench/luaprobe/probe.sh                      # the functions of probe.lua
#   bench/luaprobe/probe.sh -n 4000 time match_4 # some of them, 4000 calls each
#
# Each FCALL gets one key ("{p}k", empty) and one argument (";10000;0",
# "1764160000000" for tonumber_x10). Needs valgrind, redis-server and
# redis-benchmark; starts its own server on a free loopback port.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=2000
lib=$here/probe.lua
while [ $# -gt 0 ]; do
  case $1 in
    -n) n=$2; shift 2 ;;
    -lib) lib=$2; shift 2 ;;
    *) break ;;
  esac
done
fns=("$@")
[ ${#fns[@]} -gt 0 ] || fns=(time lpop_empty zrange_empty match_4 format_ms_x10 concat_ms_x10 tonumber_x10 table_12)
tmp=$(mktemp -d -t plaitprobe.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.%p" --instr-atstart=no \
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" >/dev/null 2>&1 &
pid=$!
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$port" -x function load replace < "$lib" >/dev/null
count() { # count FUNCTION: instructions per call
  local arg=';10000;0'
  [ "$1" = tonumber_x10 ] && arg=1764160000000
  callgrind_control -z "$pid" >/dev/null 2>&1
  rm -f "$tmp"/cg.*.*
  callgrind_control -i on "$pid" >/dev/null 2>&1
  redis-benchmark -p "$port" -n "$n" -c 1 -q fcall "$1" 1 '{p}k' "$arg" >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1
  callgrind_control -d "$pid" >/dev/null 2>&1
  local f
  f=$(ls -t "$tmp"/cg.*.* | head -1)
  echo $(( $(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}') / n ))
}
base=$(count nothing)
echo "an FCALL that does nothing (one key, one argument): $base Ir"
for f in "${fns[@]}"; do
  echo "$f: $(( $(count "$f") - base )) Ir more"
done
