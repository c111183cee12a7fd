#!/usr/bin/env python3
"""Scores trainlint against hand labels of real training code.

The labels are written by reading the code, before trainlint is run on it:
  files.txt        one `NAME/path/in/repo.py` per line: the files that were labelled
  labels.tsv       file, line, code, certainty (sure|arguable), reason: findings the catalog requires
  near_misses.tsv  same columns, certainty `not`: places the catalog says must not be flagged
NAME is a folder under CORPUS holding a checkout of the repository (see README.md for the commits).

trainlint runs once per repository on the whole folder (so every file has its project around it,
as a per-file run in a project would), and the findings in the labelled files are compared with
the labels on (file, line, code). Prints, per rule: findings, matched labels, unmatched findings
(to read by hand: each is either judged false or a label that was missed), misses of sure labels,
and precision / recall on the sure labels; then every disagreement, for the hand review.

usage: score.py --trainlint BIN --corpus DIR --labels DIR [--json OUT]
"""
import argparse
import collections
import csv
import json
import os
import subprocess
import sys


def read_tsv(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t"):
            if not row or row[0].startswith("#") or row[0] == "file":
                continue
            if len(row) < 4:
                sys.exit(f"{path}: malformed row {row!r}")
            rows.append({"file": row[0].strip(), "line": int(row[1]), "code": row[2].strip().upper(),
                         "certainty": row[3].strip().lower(), "reason": row[4].strip() if len(row) > 4 else ""})
    return rows


def lint(trainlint, repo_dir):
    p = subprocess.run([trainlint, "--format", "json", "--exit-zero", "-q", "."], cwd=repo_dir,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"trainlint failed in {repo_dir} (exit {p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)["findings"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trainlint", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--labels", required=True)
    ap.add_argument("--json")
    a = ap.parse_args()
    files = [l.strip() for l in open(os.path.join(a.labels, "files.txt"), encoding="utf-8")
             if l.strip() and not l.startswith("#")]
    fileset = set(files)
    labels = [r for r in read_tsv(os.path.join(a.labels, "labels.tsv")) if r["file"] in fileset]
    nots = [r for r in read_tsv(os.path.join(a.labels, "near_misses.tsv")) if r["file"] in fileset]
    repos = sorted({f.split("/", 1)[0] for f in files})
    findings = []
    for repo in repos:
        for f in lint(os.path.abspath(a.trainlint), os.path.join(a.corpus, repo)):
            path = repo + "/" + os.path.normpath(f["path"])
            if path in fileset:
                findings.append({"file": path, "line": f["range"]["start"]["line"], "code": f["code"],
                                 "message": f["message"]})
    key = lambda r: (r["file"], r["line"], r["code"])
    label_by_key = {key(r): r for r in labels}
    not_by_key = {key(r): r for r in nots}
    found_keys = {key(f) for f in findings}
    per = collections.defaultdict(lambda: collections.Counter())
    unmatched, misses, hit_not = [], [], []
    for f in findings:
        c = per[f["code"]]
        c["findings"] += 1
        l = label_by_key.get(key(f))
        if l:
            c["matched_" + l["certainty"]] += 1
        else:
            unmatched.append(f)
            c["unmatched"] += 1
            if key(f) in not_by_key:
                hit_not.append(f)
                c["on_near_miss"] += 1
    for l in labels:
        per[l["code"]]["labels_" + l["certainty"]] += 1
        if l["certainty"] == "sure" and key(l) not in found_keys:
            misses.append(l)
            per[l["code"]]["missed_sure"] += 1
    print(f"{len(files)} files in {len(repos)} repositories; {len(labels)} labels "
          f"({sum(l['certainty'] == 'sure' for l in labels)} sure), {len(nots)} near misses; "
          f"{len(findings)} findings\n")
    print("| rule | findings | matched sure | matched arguable | unmatched | on a near miss | sure labels | missed sure | precision (matched/findings) | recall (sure) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    tot = collections.Counter()
    for code in sorted(per):
        c = per[code]
        tot.update(c)
        prec = f"{(c['matched_sure'] + c['matched_arguable']) / c['findings']:.1%}" if c["findings"] else "n/a"
        rec = f"{c['matched_sure'] / c['labels_sure']:.1%}" if c["labels_sure"] else "n/a"
        print(f"| {code} | {c['findings']} | {c['matched_sure']} | {c['matched_arguable']} | {c['unmatched']} | "
              f"{c['on_near_miss']} | {c['labels_sure']} | {c['missed_sure']} | {prec} | {rec} |")
    prec = (tot["matched_sure"] + tot["matched_arguable"]) / tot["findings"] if tot["findings"] else 0
    rec = tot["matched_sure"] / tot["labels_sure"] if tot["labels_sure"] else 0
    print(f"| all | {tot['findings']} | {tot['matched_sure']} | {tot['matched_arguable']} | {tot['unmatched']} | "
          f"{tot['on_near_miss']} | {tot['labels_sure']} | {tot['missed_sure']} | {prec:.1%} | {rec:.1%} |")
    print("\nUnmatched findings (read each: judged false, or a label that was missed):")
    for f in sorted(unmatched, key=key):
        tag = " [on a near miss]" if f in hit_not else ""
        print(f"  {f['file']}:{f['line']} {f['code']}{tag} {f['message'][:140]}")
    print("\nMissed sure labels:")
    for l in sorted(misses, key=key):
        print(f"  {l['file']}:{l['line']} {l['code']} {l['reason'][:140]}")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as out:
            json.dump({"per_rule": {k: dict(v) for k, v in per.items()}, "unmatched": unmatched, "missed": misses},
                      out, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
