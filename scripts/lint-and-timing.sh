#!/usr/bin/env bash
# make test's lint, the timing check of the one-port Gen3 x8 card and the docs' timing figures,
# run as one job beside the tests (a few minutes on one core, mostly verilator and yosys).
#   start  stops a job an interrupted make test left running, starts this one in a session of its
#          own (`setsid`, its pid in target/lint-and-timing.pid, its output in .log) and returns
#   wait   waits for the job, prints its output and fails if any of the three failed
#   timing-check  the timing check alone, in the foreground (make timing-check)
# The job needs target/release/nanet-verilog, nanet-board and nanet-timing (make test starts it
# as soon as cargo has linked those three, while the tests still compile).
set -euo pipefail
cd "$(dirname "$0")/.."
job=target/lint-and-timing
timing_check=(target/release/nanet-timing --ports 1 --pcie gen3 --debt boards/timing-debt.toml --check --brief)
# The figures README.md and docs/performance.md state, against the timing.json the check just
# wrote (the four-port cards' figures are listed as not checked there).
doc_check=(scripts/check-doc-figures.py --only timing.json)

case ${1:-} in
start)
  # Only a pid whose command line is still this job's is stopped (pids are reused).
  old=$(cat "$job.pid" 2>/dev/null || true)
  if [ -n "$old" ] && grep -qs lint-and-timing "/proc/$old/cmdline"; then kill -- "-$old" 2>/dev/null || true; fi
  rm -f "$job.status" "$job.pid"
  setsid "$0" run >"$job.log" 2>&1 </dev/null &
  echo $! >"$job.pid"
  echo "lint and the one-port timing check run beside the build and the tests (output at the end; meanwhile $job.log)"
  ;;
timing-check)
  exec "${timing_check[@]}" ;;
run)
  set +e
  scripts/lint.sh; lint=$?
  "${timing_check[@]}" && "${doc_check[@]}"; timing=$?
  [ $lint = 0 ] && [ $timing = 0 ]
  # Written whole (renamed into place): wait reads either nothing or the status.
  echo $? >"$job.status.tmp" && mv "$job.status.tmp" "$job.status"
  ;;
wait)
  [ -f "$job.pid" ] || { echo "lint-and-timing: no job started (scripts/lint-and-timing.sh start)" >&2; exit 1; }
  while [ ! -f "$job.status" ]; do
    if ! kill -0 "$(cat "$job.pid")" 2>/dev/null && [ ! -f "$job.status" ]; then
      cat "$job.log"; echo "make test: the lint and timing job died"; exit 1
    fi
    sleep 2
  done
  cat "$job.log"; rm -f "$job.pid"
  if [ "$(cat "$job.status")" != 0 ]; then
    echo "make test: lint, the timing check or the docs' timing figures failed (above)"; exit 1
  fi
  ;;
*)
  echo "usage: $0 start|wait|timing-check (run: the job itself)" >&2; exit 2 ;;
esac
