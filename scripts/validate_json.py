#!/usr/bin/env python3
"""Validates blescope JSON outputs against the published schemas (schemas/*.schema.json, draft 2020-12).

    python3 scripts/validate_json.py OUTPUT FILE...     (one process for many files: start-up is the cost)

OUTPUT names the schema: info, timeline, gatt, transfers, ota, throughput, adverts, report (one
`report --format json` document) or report-line (one element of `files`: a line of `report --format jsonl`).
A FILE ending in .jsonl holds one document per line; any other FILE is one document. A FILE may be
written `LABEL=PATH`: LABEL (say, the capture and command that produced it) is printed instead of PATH.

Every violation is printed on one line:

    FILE:LINE: OUTPUT: at INSTANCE-POINTER: schema RULE-POINTER (RULE = value): message

INSTANCE-POINTER is the JSON pointer (RFC 6901) of the offending value in the document, RULE-POINTER
the pointer of the failing keyword in the schema file, so a change to an output names the exact key and
rule to update. Exit status: 0 all valid, 1 any violation (or unparsable JSON), 2 bad usage.
Needs the `jsonschema` package (pip install jsonschema; 4.18 or newer, for `referencing`).
"""
import json
import os
import sys

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas")
OUTPUTS = ["info", "timeline", "gatt", "transfers", "ota", "throughput", "adverts", "report", "report-line"]


def pointer(parts):
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts) if parts else "(document root)"


def registry():
    """Every schema file, by its $id, so that report.schema.json can refer to the others."""
    resources = []
    schemas = {}
    for name in sorted(os.listdir(SCHEMAS)):
        if not name.endswith(".schema.json"):
            continue
        with open(os.path.join(SCHEMAS, name)) as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)  # a malformed schema fails loudly, never validates everything
        schemas[name[: -len(".schema.json")]] = schema
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return schemas, Registry().with_resources(resources)


def leaf_errors(error):
    """The most specific errors: for anyOf/oneOf/if-then-else, the branch errors rather than the summary."""
    if error.context:
        best = [e for e in error.context if not e.context] or error.context
        # Report the branch that got deepest into the document (usually the one that was meant).
        depth = max(len(e.absolute_path) for e in best)
        for e in best:
            if len(e.absolute_path) == depth:
                yield from leaf_errors(e)
    else:
        yield error


def main(argv):
    if len(argv) < 2 or argv[0] not in OUTPUTS:
        print(__doc__, file=sys.stderr)
        return 2
    output, files = argv[0], argv[1:]
    schemas, reg = registry()
    if output == "report-line":
        schema = {"$ref": schemas["report"]["$id"] + "#/$defs/file"}
        schema_file = "report.schema.json"
    else:
        schema = schemas[output]
        schema_file = output + ".schema.json"
    validator = Draft202012Validator(schema, registry=reg)
    documents = failures = 0
    for arg in files:
        label, _, path = arg.rpartition("=") if "=" in arg else (arg, "", arg)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"{label}: cannot read: {e}")
            failures += 1
            continue
        if path.endswith(".jsonl"):
            lines = [(i + 1, line) for i, line in enumerate(text.split("\n")) if line.strip()]
        else:
            lines = [(1, text)]
        if not lines:
            print(f"{label}: {output}: empty output")
            failures += 1
        for number, line in lines:
            documents += 1
            try:
                doc = json.loads(line)
            except ValueError as e:
                print(f"{label}:{number}: {output}: not JSON: {e}")
                failures += 1
                continue
            for error in validator.iter_errors(doc):
                for e in leaf_errors(error):
                    failures += 1
                    rule = e.validator
                    value = json.dumps(e.validator_value, ensure_ascii=False)
                    if len(value) > 120:
                        value = value[:117] + "..."
                    where = schema_file
                    if e.schema_path and e.absolute_schema_path and "$ref" in list(e.absolute_schema_path):
                        where = f"{schema_file} (through $ref)"
                    print(f"{label}:{number}: {output}: at {pointer(list(e.absolute_path))}: "
                          f"{where} {pointer(list(e.absolute_schema_path))} ({rule} = {value}): {e.message[:300]}")
    print(f"{output}: {documents} document(s) in {len(files)} file(s), {failures} violation(s)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
