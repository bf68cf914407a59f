#!/usr/bin/env bash
# Runs the README's test command N times in a row and writes one line per run, to find a test that fails one run
# in ten or twenty (CI runs the suite once: such a test fails it sooner or later). Run it in a clean clone after
# `npm ci`, and leave the machine otherwise idle so that it is loaded as CI's is, no more.
#   scripts/suite-loop.sh 20 /tmp/suite-loop     → /tmp/suite-loop/summary.txt and run-N.log for each run
set -u
runs=${1:?usage: scripts/suite-loop.sh RUNS OUTPUT_FOLDER}
out=${2:?usage: scripts/suite-loop.sh RUNS OUTPUT_FOLDER}
mkdir -p "$out"
cd "$(dirname "$0")/.."
failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  CI=true npm test >"$out/run-$i.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
  # vitest colours its closing lines; the summary keeps their words.
  counts=$(sed 's/\x1b\[[0-9;]*m//g' "$out/run-$i.log" | grep -E '^ +Tests ' | tail -1 | tr -s ' ')
  echo "run $i: exit $rc, $(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg),${counts:- no closing line}" |
    tee -a "$out/summary.txt"
  # A run that leaves an agent, a browser, a keychain daemon or a Postgres cluster behind loads the next one: say
  # so. (`node .*flowsync`: an output folder named flowsync-… must not make this script find itself.)
  if leftovers=$(pgrep -fa 'gnome-keyring-daemon|chromium|node .*flowsync|postgres -D .*flowsync-pg-'); then
    echo "run $i left running: $leftovers" | tee -a "$out/summary.txt"
  fi
done
echo "$((runs - failed)) of $runs runs passed" | tee -a "$out/summary.txt"
[ "$failed" -eq 0 ]
