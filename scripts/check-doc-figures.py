#!/usr/bin/env python3
"""Check the figures that README.md and docs/performance.md state against the benchmark JSON.

A checked figure carries a marker, an HTML comment right after the number (and its unit, if any),
that names the JSON file in target/bench/ and the value in it:

    253 MHz<!-- timing.json: designs[design=nanet_nic, 1 port].domains.core_clock.fmax_mhz -->
    95.1%<!-- rx_bandwidth.json: rows[ports=4][memory=gen2x8][payload_bytes=256].memory_fraction *100 -->

The figure is the number right before the marker: digits with an optional decimal part
(thousands may be grouped with commas), then at most one unit word or `%` (and `**`) before the
`<!--`. The path is dotted keys; a key may be followed by selectors that narrow a list to one item:
`[N]` (the N-th item, from 0), `[key=value]` (items whose `key` is `value`: compared as numbers
when both are numbers, as text otherwise) and `[key^=value]` (items whose `key` starts with
`value`). Selectors apply in turn; after them exactly one item must be left. An optional `*FACTOR`
at the end multiplies the JSON value (`*100` for a fraction the doc writes as a percentage).

Rounding: the JSON value (times the factor) agrees with the doc when it rounds to the doc's number
at the doc's own decimals (`253` takes 252.5 to 253.5, `95.1` takes 95.05 to 95.15).

Outcomes, per marker:
- agrees: counted;
- disagrees: listed with the doc's and the JSON's values, exit status 1;
- broken (no such key, a selector that leaves more than one item, a value that is not a number,
  no number before the marker, a comment naming a .json file that does not parse as a marker):
  listed, exit status 1;
- not checked: its file is missing (make bench writes them all), or a selector finds no item (the
  file is from a run that measured other designs: `make test`'s timing check times the one-port
  card only). Listed; no failure, except under --only (below).

--only FILE.json[,FILE.json]: check only the markers pointing at those files; fail when one of them
is missing in the bench folder, has no marker in the docs, or had none of its markers checked.
"""

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DOCS = ["README.md", "docs/performance.md"]
DEFAULT_BENCH = os.path.join("target", "bench")

COMMENT = re.compile(r"<!--(.*?)-->")
# A comment that means to be a marker: it starts with a name ending in .json.
LOOKS_LIKE_MARKER = re.compile(r"^\s*[\w.-]+\.json\b")
MARKER = re.compile(r"^\s*([\w.-]+\.json)\s*:\s*(.+?)\s*$")
FACTOR = re.compile(r"^(.*?)\s+\*\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$")
# The figure: a number not glued to a word or another number (so `x8` or `M10K` never count),
# then at most one unit word (or %), optionally closing bold, then the marker.
FIGURE = re.compile(
    r"(?<![\w.,])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?)"
    r"(\s*(?:%|[A-Za-zµ]+(?:/[A-Za-z]+)?)?)\**\s*$"
)


class Broken(Exception):
    """A marker that cannot be checked as written."""


class NoRow(Exception):
    """A selector that finds nothing: the JSON is from a run that did not measure it."""


def split_path(path):
    """`a.b[x=1][0].c` -> [("a", []), ("b", ["x=1", "0"]), ("c", [])]."""
    steps, key, sels, i = [], "", [], 0
    while i < len(path):
        c = path[i]
        if c == "[":
            j = path.find("]", i)
            if j < 0:
                raise Broken(f"unclosed [ in {path!r}")
            sels.append(path[i + 1 : j].strip())
            i = j + 1
            continue
        if c == ".":
            if not key and not sels:
                raise Broken(f"empty key in {path!r}")
            steps.append((key.strip(), sels))
            key, sels = "", []
        elif sels:
            raise Broken(f"text after a selector in {path!r} (a . is missing)")
        else:
            key += c
        i += 1
    if not key and not sels:
        raise Broken(f"empty key at the end of {path!r}")
    steps.append((key.strip(), sels))
    return steps


def shown(v):
    """A JSON value as a person reads it: 58617, 253.485, 0.951 (no exponent)."""
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.6f}".rstrip("0").rstrip(".")


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def matches(item, sel):
    m = re.fullmatch(r"\s*([^=^]+?)\s*(\^?=)\s*(.*?)\s*", sel)
    if not m:
        raise Broken(f"selector [{sel}] is neither [N], [key=value] nor [key^=value]")
    key, op, want = m.groups()
    if not isinstance(item, dict) or key not in item:
        return False
    v = item[key]
    if op == "^=":
        return str(v).startswith(want)
    if is_number(v):
        try:
            return float(want) == float(v)
        except ValueError:
            return False
    if isinstance(v, bool):
        return want.lower() == str(v).lower()
    return str(v) == want


def resolve(data, path):
    cur, where = data, ""
    for key, sels in split_path(path):
        if key:
            where = f"{where}.{key}" if where else key
            if isinstance(cur, list):
                raise Broken(f"{where[: -len(key) - 1]} is a list: select an item ([N] or "
                             f"[key=value]) before .{key}")
            if not isinstance(cur, dict) or key not in cur:
                have = ", ".join(sorted(cur)) if isinstance(cur, dict) else json.dumps(cur)[:40]
                raise Broken(f"no key {key!r} at {where} (there: {have})")
            cur = cur[key]
        if not sels:
            continue
        if not isinstance(cur, list):
            raise Broken(f"{where} is not a list, so [{sels[0]}] selects nothing")
        items = cur
        for s in sels:
            where += f"[{s}]"
            if re.fullmatch(r"\s*\d+\s*", s):
                n = int(s)
                if n >= len(items):
                    raise NoRow(f"{where}: {len(items)} items")
                items = [items[n]]
            else:
                items = [it for it in items if matches(it, s)]
        if not items:
            raise NoRow(where)
        if len(items) > 1:
            raise Broken(f"{where} leaves {len(items)} items; add a selector")
        cur = items[0]
    if not is_number(cur):
        raise Broken(f"{path} is {json.dumps(cur)[:60]}, not a number")
    return cur


class Marker:
    def __init__(self, doc, line, file, path, factor, number, unit, decimals):
        self.doc, self.line, self.file, self.path = doc, line, file, path
        self.factor, self.decimals = factor, decimals
        self.figure = number + unit
        self.value = float(number.replace(",", ""))

    def at(self):
        return f"{self.doc}:{self.line}"

    def target(self):
        f = f" *{self.factor:g}" if self.factor != 1 else ""
        return f"{self.file}: {self.path}{f}"


CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def markers_in(doc, text, broken):
    """The markers of a Markdown text; code spans and fenced blocks (examples) hold none."""
    found, fence = [], None
    for n, line in enumerate(text.splitlines(), 1):
        f = re.match(r"\s*(```+|~~~+)", line)
        if f and (fence is None or f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence)):
            fence = f.group(1) if fence is None else None
            continue
        if fence is not None:
            continue
        line = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        for c in COMMENT.finditer(line):
            body = c.group(1)
            if not LOOKS_LIKE_MARKER.match(body):
                continue
            m = MARKER.match(body)
            if not m:
                broken.append(f"{doc}:{n}: marker <!--{body}--> is not `FILE.json: PATH`")
                continue
            file, path = m.groups()
            factor = 1.0
            fm = FACTOR.match(path)
            if fm:
                path, factor = fm.group(1), float(fm.group(2))
            fig = FIGURE.search(line[: c.start()])
            if not fig:
                broken.append(f"{doc}:{n}: no number right before <!--{body}-->")
                continue
            number, frac, unit = fig.groups()
            found.append(
                Marker(doc, n, file, path.strip(), factor, number, unit, len(frac or ""))
            )
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Check the figures README.md and docs/performance.md state (those marked "
        "<!-- FILE.json: PATH -->) against the JSON in target/bench/.",
        epilog="Marker syntax and rules: see the top of this script and docs/performance.md.",
    )
    ap.add_argument("--bench-dir", help=f"folder of the JSON (default: {DEFAULT_BENCH} in the repository)")
    ap.add_argument("--docs", nargs="+", help="the documents to read (default: README.md docs/performance.md)")
    ap.add_argument("--only", help="FILE.json[,FILE.json]: check only markers pointing at these; each must exist")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every figure checked")
    a = ap.parse_args(argv)

    bench = a.bench_dir or os.path.join(ROOT, DEFAULT_BENCH)
    bench_shown = a.bench_dir or DEFAULT_BENCH
    docs = a.docs or [os.path.join(ROOT, d) for d in DEFAULT_DOCS]
    only = [f.strip() for f in a.only.split(",") if f.strip()] if a.only else None

    broken, markers = [], []
    for d in docs:
        name = os.path.relpath(d, ROOT) if not a.docs else d
        try:
            with open(d, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"check-doc-figures: cannot read {name}: {e.strerror}", file=sys.stderr)
            return 1
        markers += markers_in(name, text, broken)
    if only is not None:
        markers = [m for m in markers if m.file in only]

    wrong, ok, unchecked, checked_files = [], 0, {}, set()
    cache = {}
    for m in markers:
        if m.file not in cache:
            p = os.path.join(bench, m.file)
            try:
                with open(p, encoding="utf-8") as f:
                    cache[m.file] = json.load(f)
            except FileNotFoundError:
                cache[m.file] = None
            except (OSError, ValueError) as e:
                broken.append(f"{os.path.join(bench_shown, m.file)} cannot be read as JSON: {e}")
                cache[m.file] = False
        data = cache[m.file]
        if data is False:
            continue
        if data is None:
            why = f"no {os.path.join(bench_shown, m.file)}: run make bench"
            unchecked.setdefault(why, []).append(m)
            continue
        try:
            v = resolve(data, m.path) * m.factor
        except NoRow as e:
            unchecked.setdefault(f"{m.file} has no {e}", []).append(m)
            continue
        except Broken as e:
            broken.append(f"{m.at()}: {m.figure}<!-- {m.target()} -->: {e}")
            continue
        checked_files.add(m.file)
        tol = 0.5 * 10 ** -m.decimals
        if abs(v - m.value) <= tol * (1 + 1e-9) + 1e-12 * abs(v):
            ok += 1
            if a.verbose:
                print(f"ok        {m.at()}: {m.figure} ({m.target()} = {shown(v)})")
        else:
            wrong.append(
                f"{m.at()}: the doc says {m.figure.strip()}, {m.target()} is {shown(v)} "
                f"({v:.{m.decimals}f} at the doc's {m.decimals} decimals)"
            )

    only_fail = []
    for f in only or []:
        if not os.path.exists(os.path.join(bench, f)):
            only_fail.append(f"no {os.path.join(bench_shown, f)} (--only asks for it)")
        elif not any(m.file == f for m in markers):
            only_fail.append(f"no marker in the docs points at {f} (--only asks for it)")
        elif f not in checked_files and cache.get(f) is not False:
            only_fail.append(f"none of the markers pointing at {f} found its value there")

    for why, ms in unchecked.items():
        lines = {}
        for m in ms:
            lines.setdefault(m.doc, [])
            if m.line not in lines[m.doc]:
                lines[m.doc].append(m.line)
        where = "; ".join(f"{d} line{'s' if len(ls) > 1 else ''} {', '.join(map(str, ls))}"
                          for d, ls in lines.items())
        print(f"not checked ({why}): {len(ms)} figure{'s' if len(ms) > 1 else ''} at {where}")
    for line in broken:
        print(f"BROKEN MARKER {line}")
    for line in wrong:
        print(f"WRONG FIGURE  {line}")
    for line in only_fail:
        print(f"MISSING       {line}")
    n_unchecked = sum(len(v) for v in unchecked.values())
    print(
        f"check-doc-figures: {ok} figure{'s' if ok != 1 else ''} agree with {bench_shown}/, "
        f"{len(wrong)} disagree, {len(broken)} broken, {n_unchecked} not checked"
        + (f" (only {', '.join(only)})" if only else "")
    )
    return 1 if wrong or broken or only_fail else 0


if __name__ == "__main__":
    sys.exit(main())
