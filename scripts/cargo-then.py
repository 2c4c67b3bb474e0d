#!/usr/bin/env python3
"""Run a cargo build and start a command as soon as cargo has linked the named binaries.

    scripts/cargo-then.py --when nanet-verilog,nanet-board,nanet-timing \\
        --run 'scripts/lint-and-timing.sh start' -- cargo build --release ...

make test builds everything in one cargo invocation and starts the lint and timing job the moment
its three tools exist, so that job and the rest of the build share the two cores (built apart,
the tools' build left one core idle for minutes: the gateware crate is one codegen unit).

cargo is given --message-format=json-render-diagnostics: its errors and warnings still reach
stderr as cargo prints them; its JSON messages on stdout are read here and not shown. The command
(a shell command line) must return at once; it starts its work in the background. Exit status:
cargo's; 1 if cargo succeeded without linking every named binary (a misspelt name).
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--when", required=True,
                    help="comma-separated binary names: the command runs once all are linked")
    ap.add_argument("--run", required=True, help="shell command to run then")
    ap.add_argument("cargo", nargs=argparse.REMAINDER, help="-- the cargo command")
    args = ap.parse_args()
    cmd = args.cargo[1:] if args.cargo[:1] == ["--"] else args.cargo
    if not cmd:
        ap.error("no cargo command after --")
    waiting = set(b for b in args.when.split(",") if b)
    started = False

    cargo = subprocess.Popen(cmd + ["--message-format=json-render-diagnostics"],
                             stdout=subprocess.PIPE, text=True)
    for line in cargo.stdout:
        if started or not line.startswith("{"):
            continue
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        target = msg["target"]
        if "bin" in target["kind"] and not msg["profile"]["test"] and target["name"] in waiting \
                and os.path.exists(msg["executable"]):
            waiting.discard(target["name"])
            if not waiting:
                started = True
                sys.stdout.flush()
                run = subprocess.run(args.run, shell=True)
                if run.returncode != 0:
                    print(f"cargo-then: `{args.run}` failed (exit status {run.returncode}); "
                          "cargo stopped", file=sys.stderr)
                    cargo.kill()
                    cargo.wait()
                    return 1
    status = cargo.wait()
    if status == 0 and not started:
        print(f"cargo-then: cargo built no binary named {', '.join(sorted(waiting))}; "
              f"`{args.run}` not run", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
