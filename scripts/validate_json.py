#!/usr/bin/env python3
"""Validates blescope JSON outputs against the published schemas (schemas/*.schema.json, draft 2020-12).

    python3 scripts/validate_json.py OUTPUT FILE...     (one process for many files: start-up is the cost)

OUTPUT names the schema: info, timeline, gatt, transfers, ota, throughput, adverts, diagnose, iso, diff, report (one
`report --format json` document), report-line (one element of `files`: a line of `report --format jsonl`) or
tables/TABLE (a table file of `export --tables`: captures, connections, findings, streams, ota_sessions,
iso_streams, quality_reports, audio_streams, sco_links, security).
A FILE ending in .jsonl holds one document per line; any other FILE is one document. A FILE may be
written `LABEL=PATH`: LABEL (say, the capture and command that produced it) is printed instead of PATH.

Every violation is printed on one line:

    FILE:LINE: OUTPUT: at INSTANCE-POINTER: schema RULE-POINTER (RULE = value): message

INSTANCE-POINTER is the JSON pointer (RFC 6901) of the offending value in the document, RULE-POINTER
the pointer of the failing keyword in the schema file, so a change to an output names the exact key and
rule to update. Exit status: 0 all valid, 1 any violation (or unparsable JSON), 2 bad usage.
Needs the `jsonschema` package: Debian's python3-jsonschema (4.10 in bookworm) or pip's (4.18 and newer use
`referencing` for the references between schema files; older ones a RefResolver).
"""
import json
import os
import sys

from jsonschema import Draft202012Validator

try:
    if os.environ.get("BLESCOPE_JSONSCHEMA_LEGACY"):
        raise ImportError("legacy path asked for")
    from referencing import Registry, Resource
except ImportError:  # jsonschema < 4.18
    Registry = None

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schemas")
OUTPUTS = ["info", "timeline", "gatt", "transfers", "ota", "throughput", "adverts", "report", "report-line", "diagnose", "iso", "diff"]
# `blescope export --tables`: one schema per table file, in schemas/tables/ (OUTPUT `tables/captures`, …).
TABLES = ["captures", "connections", "findings", "streams", "ota_sessions", "iso_streams", "quality_reports", "audio_streams", "sco_links", "security"]
OUTPUTS += ["tables/" + t for t in TABLES]


def pointer(parts):
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts) if parts else "(document root)"


def locate(schemas, name, path):
    """The schema file and JSON pointer of a failing keyword: jsonschema's schema path leaves out the `$ref`
    steps, so walk it and follow each reference (into another file when it names one)."""
    node, pointer = schemas[name], []
    for key in path:
        while isinstance(node, dict) and key not in node and "$ref" in node:
            ref = node["$ref"]
            target, _, fragment = ref.partition("#")
            if target:
                name = target[: -len(".schema.json")]
            node, pointer = schemas[name], []
            for part in [p for p in fragment.split("/") if p]:
                node = node[part]
                pointer.append(part)
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return name + ".schema.json", pointer + [key]
        pointer.append(key)
    return name + ".schema.json", pointer


def registry():
    """Every schema file, by its $id, so that report.schema.json can refer to the others."""
    resources = []
    store = {}
    schemas = {}
    names = sorted(os.listdir(SCHEMAS)) + ["tables/" + n for n in sorted(os.listdir(os.path.join(SCHEMAS, "tables")))]
    for name in names:
        if not name.endswith(".schema.json"):
            continue
        with open(os.path.join(SCHEMAS, name)) as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)  # a malformed schema fails loudly, never validates everything
        schemas[name[: -len(".schema.json")]] = schema
        if Registry is not None:
            resources.append((schema["$id"], Resource.from_contents(schema)))
        store[schema["$id"]] = schema
    if Registry is None:
        return schemas, store
    return schemas, Registry().with_resources(resources)


def leaf_errors(error):
    """The most specific errors: for anyOf/oneOf/if-then-else, the branch errors rather than the summary."""
    if error.context:
        best = [e for e in error.context if not e.context] or error.context
        # Report the branch that got deepest into the document (usually the one that was meant).
        depth = max(len(e.absolute_path) for e in best)
        deepest = [e for e in best if len(e.absolute_path) == depth]
        # At equal depth, the branch that failed on something other than its type ("not null") was the one meant.
        meant = [e for e in deepest if e.validator != "type"] or deepest
        for e in meant:
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
        schemas["report-line"] = {"$ref": "report.schema.json#/$defs/file"}
    else:
        schema = schemas[output]
    if Registry is None:
        import warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        from jsonschema import RefResolver
        root = schemas["report" if output == "report-line" else output]
        if output == "report-line":
            schema = root["$defs"]["file"]
        validator = Draft202012Validator(schema, resolver=RefResolver(root["$id"], root, store=reg))
    else:
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
                    where, rule_pointer = locate(schemas, output, list(e.absolute_schema_path))
                    print(f"{label}:{number}: {output}: at {pointer(list(e.absolute_path))}: "
                          f"{where} {pointer(rule_pointer)} ({rule} = {value}): {e.message[:300]}")
    print(f"{output}: {documents} document(s) in {len(files)} file(s), {failures} violation(s)", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
