#!/usr/bin/env python3
"""Checks docs/reproduction.md's verdicts against the data they judge.

tools/repro.sh writes every comparison with a paper to docs/reproduction-verdicts.csv (columns
id, figure, claim, paper, paper_value, emulated, ratio, kind, data, test, verdict, cause; see
tools/repro/lib.sh). This script, independently of the shell/awk code that wrote them:

  1. recomputes each row's verdict from its numbers: a "value" row from paper_value and emulated
     (within 10% when |emulated / paper - 1| <= 0.10, else off; the ratio column must be that
     ratio to three decimals), an "order" or "claim" row by evaluating its test on its data
     ("ordering matches" / "holds" when true, else off);
  2. requires an off row to carry a cause that starts "published:" or "not explained", and a
     row that is not off to carry none;
  3. checks that the page's "## Verdicts" table shows each row exactly as the CSV has it, that
     every tag "[ID: verdict]" in the page's text names a row and states that row's verdict,
     that every row is tagged in the text at least once, and that the counts sentence under the
     table matches the rows;
  4. refuses verdicts typed as fixed text: phrases such as "as in the paper" or "unlike the
     paper" must not appear; a verdict is a tag.

  check_verdicts.py PAGE CSV            exit 1 naming each disagreement
  check_verdicts.py --render CSV        print the page's verdict table and counts sentence
  check_verdicts.py --self-test PAGE CSV
      spoil a copy in memory four ways (a table verdict, a text tag, a number in the CSV, the
      counts sentence) and exit 1 unless each spoiled copy is refused
"""
import ast
import csv
import io
import re
import sys

VERDICTS = ("within 10%", "ordering matches", "holds", "off")
FIXED_PHRASES = ("as in the paper", "as the paper found", "unlike the paper", "never the outright winner",
                 "not monotone", "as the paper says")
TAG = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9.-]*): (within 10%|ordering matches|holds|off)\]")
COLUMNS = ["id", "figure", "claim", "paper", "paper_value", "emulated", "ratio", "kind", "data", "test",
           "verdict", "cause"]


def read_rows(text):
    rows = list(csv.DictReader(io.StringIO(text)))
    return rows


def evaluate(test, data):
    """Evaluates an awk-syntax boolean test over name=number pairs, without eval."""
    env = {}
    for pair in filter(None, (p.strip() for p in data.split(";"))):
        name, _, num = pair.partition("=")
        env[name.strip()] = float(num)
    py = re.sub(r"&&", " and ", test)
    py = re.sub(r"\|\|", " or ", py)
    py = re.sub(r"!(?!=)", " not ", py)
    tree = ast.parse(py, mode="eval")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.BoolOp):
            vals = [ev(v) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            if isinstance(node.op, ast.Not):
                return not v
            if isinstance(node.op, ast.USub):
                return -v
            raise ValueError("operator not allowed")
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if isinstance(node.op, ast.Div):
                return a / b
            if type(node.op) in ops:
                return ops[type(node.op)]
            raise ValueError("operator not allowed")
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise ValueError("chained comparison (awk would not chain it)")
            a, b = ev(node.left), ev(node.comparators[0])
            op = type(node.ops[0])
            return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b, ast.Eq: a == b,
                    ast.NotEq: a != b}[op]
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        raise ValueError("expression not allowed: " + ast.dump(node))

    return ev(tree)


def expected_verdict(row):
    kind = row["kind"]
    if kind == "value":
        p, e = float(row["paper_value"]), float(row["emulated"])
        ratio = e / p
        if row["ratio"] != "%.3f" % ratio:
            raise ValueError("ratio %s, but emulated / paper = %.3f" % (row["ratio"], ratio))
        return "within 10%" if abs(ratio - 1) <= 0.10 else "off"
    if kind in ("order", "claim"):
        ok = evaluate(row["test"], row["data"])
        return ("ordering matches" if kind == "order" else "holds") if ok else "off"
    raise ValueError("unknown kind " + repr(kind))


def cell(s):
    return s.replace("|", "/")


def render(rows):
    out = ["| id | figure | paper's claim | paper | emulated | ratio | verdict | cause |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s |" % " | ".join(cell(r[k]) for k in ("id", "figure", "claim", "paper", "emulated", "ratio",
                                                               "verdict", "cause")))
    out.append("")
    out.append(counts_sentence(rows))
    return "\n".join(out)


def counts_sentence(rows):
    n = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    pub = sum(r["verdict"] == "off" and r["cause"].startswith("published:") for r in rows)
    nexp = sum(r["verdict"] == "off" and r["cause"].startswith("not explained") for r in rows)
    return ("%d comparisons: %d within 10%%, %d orderings match, %d claims hold, %d off "
            "(%d with a published cause, %d not explained)." %
            (len(rows), n["within 10%"], n["ordering matches"], n["holds"], n["off"], pub, nexp))


def check(page, rows):
    errors = []
    ids = set()
    for r in rows:
        rid = r["id"]
        if rid in ids:
            errors.append("%s: id used twice" % rid)
        ids.add(rid)
        try:
            want = expected_verdict(r)
        except (ValueError, KeyError, ZeroDivisionError, SyntaxError) as e:
            errors.append("%s: cannot recompute the verdict: %s" % (rid, e))
            continue
        if r["verdict"] != want:
            errors.append("%s: the CSV says '%s', its numbers give '%s'" % (rid, r["verdict"], want))
        if r["verdict"] == "off" and not (r["cause"].startswith("published:") or r["cause"].startswith("not explained")):
            errors.append("%s: off without 'published: ...' or 'not explained' as its cause" % rid)
        if r["verdict"] != "off" and r["cause"]:
            errors.append("%s: not off but carries a cause" % rid)
    byid = {r["id"]: r for r in rows}

    # The page's verdict table.
    m = re.search(r"^## Verdicts\n(.*?)(?=^## |\Z)", page, re.S | re.M)
    if not m:
        errors.append("the page has no '## Verdicts' section")
        table_rows, section = {}, ""
    else:
        section = m.group(1)
        table_rows = {}
        for line in section.splitlines():
            if line.startswith("| ") and not line.startswith("| id |"):
                cells = [c.strip() for c in line.strip()[1:-1].split("|")]
                if len(cells) == 8:
                    table_rows[cells[0]] = cells
        for rid, r in byid.items():
            want = [cell(r[k]) for k in ("id", "figure", "claim", "paper", "emulated", "ratio", "verdict", "cause")]
            got = table_rows.get(rid)
            if got is None:
                errors.append("%s: not in the page's verdict table" % rid)
            elif got != [w.strip() for w in want]:
                errors.append("%s: the page's table row %s differs from the CSV %s" % (rid, got, want))
        for rid in table_rows:
            if rid not in byid:
                errors.append("%s: in the page's verdict table but not in the CSV" % rid)
        if counts_sentence(rows) not in section:
            errors.append("the counts sentence under the verdict table is not: " + counts_sentence(rows))

    # The text's tags (outside the verdict table).
    text = page[:m.start()] + page[m.end():] if m else page
    tagged = set()
    for t in TAG.finditer(text):
        rid, verdict = t.group(1), t.group(2)
        if rid not in byid:
            errors.append("tag [%s: %s] names no row of the CSV" % (rid, verdict))
        elif byid[rid]["verdict"] != verdict:
            errors.append("tag [%s: %s] but the row's verdict is '%s'" % (rid, verdict, byid[rid]["verdict"]))
        tagged.add(rid)
    for rid in byid:
        if rid not in tagged:
            errors.append("%s: no sentence of the page carries its tag" % rid)
    low = text.lower()
    for phrase in FIXED_PHRASES:
        if phrase in low:
            errors.append("fixed-text verdict '%s' in the page (use a computed tag)" % phrase)
    return errors


def self_test(page, csv_text):
    rows = read_rows(csv_text)
    if check(page, rows):
        print("self-test: the unspoiled page does not pass", file=sys.stderr)
        return 1
    failures = 0
    # 1. a verdict in the table flipped
    r0 = rows[0]
    flip = "off" if r0["verdict"] != "off" else "holds"
    line = next(l for l in page.splitlines() if l.startswith("| %s |" % r0["id"]))
    spoiled = page.replace(line, line.replace("| %s |" % r0["verdict"], "| %s |" % flip))
    failures += not check(spoiled, rows)
    # 2. a tag in the text flipped
    t = TAG.search(page)
    other = "off" if t.group(2) != "off" else "within 10%"
    spoiled = page[:t.start()] + "[%s: %s]" % (t.group(1), other) + page[t.end():]
    failures += not check(spoiled, rows)
    # 3. a number in the CSV changed so that its verdict no longer follows
    vrow = next(r for r in rows if r["kind"] == "value")
    bad = [dict(r) for r in rows]
    for r in bad:
        if r["id"] == vrow["id"]:
            r["emulated"] = str(float(r["emulated"]) * (2.0 if r["verdict"] != "off" else float(r["ratio"]) ** -1))
    failures += not check(page, bad)
    # 4. the counts sentence
    spoiled = page.replace(counts_sentence(rows), counts_sentence(rows).replace(" comparisons", "0 comparisons"))
    failures += not check(spoiled, rows)
    if failures:
        print("self-test: %d spoiled copies were accepted" % failures, file=sys.stderr)
        return 1
    print("self-test: the page passes and each of 4 spoiled copies is refused")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--render":
        with open(argv[2], encoding="utf-8") as f:
            print(render(read_rows(f.read())))
        return 0
    if len(argv) == 4 and argv[1] == "--self-test":
        with open(argv[2], encoding="utf-8") as f:
            page = f.read()
        with open(argv[3], encoding="utf-8") as f:
            return self_test(page, f.read())
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        page = f.read()
    with open(argv[2], encoding="utf-8") as f:
        rows = read_rows(f.read())
    errors = check(page, rows)
    for e in errors:
        print("check_verdicts: " + e, file=sys.stderr)
    if errors:
        return 1
    print("check_verdicts: %d verdicts agree with their numbers, the table and the text" % len(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
