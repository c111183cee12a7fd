"""Validates SARIF logs against the official OASIS SARIF 2.1.0 JSON schema.

    /usr/bin/python3 tests/integration/validate_sarif.py SCHEMA LOG.sarif [LOG.sarif...]

Uses Debian's python3-jsonschema with the validator the schema names (Draft 7) and format checking
(URIs through python3-rfc3987), then checks what a schema cannot: every result's ruleIndex points
at its ruleId, every embedded link "[text](id)" in a result's message names one of its related
locations, and every uriBaseId is declared in originalUriBaseIds. Prints each problem and exits 1
when a log is invalid, 2 when the validator itself cannot run.
"""

import json
import re
import sys

try:
    import jsonschema
except ImportError:
    print("validate_sarif: python3-jsonschema is missing (bash scripts/deps.sh --runtime-tests installs it)",
          file=sys.stderr)
    sys.exit(2)

LINK = re.compile(r"(?<!\\)\[(?:[^\]\\]|\\.)*\]\((\d+)\)")


def uri_base_ids(node, out):
    if isinstance(node, dict):
        if "uriBaseId" in node:
            out.add(node["uriBaseId"])
        for v in node.values():
            uri_base_ids(v, out)
    elif isinstance(node, list):
        for v in node:
            uri_base_ids(v, out)


def consistency(log):
    problems = []
    for r, run in enumerate(log.get("runs", [])):
        rules = run.get("tool", {}).get("driver", {}).get("rules", [])
        declared = set(run.get("originalUriBaseIds", {}))
        used = set()
        uri_base_ids(run.get("results", []), used)
        uri_base_ids(run.get("invocations", []), used)
        for u in sorted(used - declared):
            problems.append(f"runs[{r}]: uriBaseId {u!r} is not declared in originalUriBaseIds")
        for i, res in enumerate(run.get("results", [])):
            where = f"runs[{r}].results[{i}]"
            idx = res.get("ruleIndex")
            if idx is not None and (idx >= len(rules) or rules[idx].get("id") != res.get("ruleId")):
                problems.append(f"{where}: ruleIndex {idx} does not point at rule {res.get('ruleId')!r}")
            ids = {loc.get("id") for loc in res.get("relatedLocations", [])}
            for m in LINK.finditer(res.get("message", {}).get("text", "")):
                if int(m.group(1)) not in ids:
                    problems.append(f"{where}: the message links to related location {m.group(1)}, which is not there")
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    checker = cls.FORMAT_CHECKER
    if "uri" not in checker.checkers or "uri-reference" not in checker.checkers:
        print("validate_sarif: URI format checks need python3-rfc3987 (bash scripts/deps.sh --runtime-tests)",
              file=sys.stderr)
        return 2
    validator = cls(schema, format_checker=checker)
    bad = 0
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        for e in errors:
            loc = "/".join(str(p) for p in e.absolute_path)
            print(f"{path}: /{loc}: {e.message}")
        problems = consistency(log)
        for p in problems:
            print(f"{path}: {p}")
        if errors or problems:
            bad += 1
        else:
            print(f"{path}: valid SARIF 2.1.0 ({cls.__name__})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
