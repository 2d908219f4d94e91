"""Validation of the toolkit's JSON output against its schemas.

Every document and every --json=lines line names its schema in its
"schema" key (fabric-toolkit/TOOL/N, N its version); it is checked against
schemas/TOOL.schema.json, which builds on schemas/common.schema.json.
A field that a schema does not declare fails the check.
"""
import json
import os
import re
import warnings

SCHEMA_DIR = os.environ.get(
    "FABRIC_SCHEMA_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas"))

_validators = {}


def _validator(tool, part):
    """A validator of one part of a tool's schema: its document or its
    event (the schema itself accepts either; naming the part gives errors
    that say which field is wrong)."""
    if (tool, part) in _validators:
        return _validators[(tool, part)]
    import jsonschema
    store = {}
    for name in os.listdir(SCHEMA_DIR):
        if name.endswith(".schema.json"):
            with open(os.path.join(SCHEMA_DIR, name)) as f:
                s = json.load(f)
            store[s["$id"]] = s
    path = os.path.join(SCHEMA_DIR, tool + ".schema.json")
    if not os.path.exists(path):
        raise ValueError(f"no schema for tool {tool!r} in {SCHEMA_DIR}")
    with open(path) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        resolver = jsonschema.RefResolver(schema["$id"], schema, store=store)
        v = cls({"$ref": schema["$id"] + "#/$defs/" + part}, resolver=resolver)
    _validators[(tool, part)] = v
    return v


def problems(obj):
    """The schema violations of one document or event line, as strings."""
    if not isinstance(obj, dict):
        return ["not a JSON object"]
    m = re.fullmatch(r"fabric-toolkit/([a-z][a-z_-]*)/[1-9][0-9]*", str(obj.get("schema", "")))
    if not m:
        return [f"no valid schema key: {obj.get('schema')!r}"]
    v = _validator(m.group(1), "event" if "event" in obj else "document")
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
            for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]


def parse_lines(text):
    """The objects of --json=lines output: every line one compact object,
    every line but the last an event, the last the document."""
    lines = text.splitlines()
    if not lines:
        raise ValueError("no output")
    objs = []
    for i, line in enumerate(lines, 1):
        try:
            objs.append(json.loads(line))
        except ValueError as e:
            raise ValueError(f"line {i} is not JSON: {e}: {line[:200]!r}")
    for i, o in enumerate(objs[:-1], 1):
        if not isinstance(o, dict) or "event" not in o:
            raise ValueError(f"line {i} is not an event")
    if not isinstance(objs[-1], dict) or "event" in objs[-1]:
        raise ValueError("the last line is not the document")
    return objs


_UNKNOWN = "zz_undeclared"
_closed_shapes = set()


def _sample(value):
    """A copy of a valid object with each array cut to one item of each
    set of keys: still valid (no schema counts items), and every kind of
    object in it still there, small enough to validate many times."""
    if isinstance(value, dict):
        return {k: _sample(v) for k, v in value.items()}
    if isinstance(value, list):
        seen, kept = set(), []
        for item in value:
            shape = (tuple(sorted(item)), item.get("kind")) if isinstance(item, dict) else type(item).__name__
            if shape not in seen:
                seen.add(shape)
                kept.append(_sample(item))
        return kept
    return value


def _objects(value, path=()):
    """The paths of every object within a value, itself included."""
    if isinstance(value, dict):
        yield path
        for k, v in value.items():
            yield from _objects(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _objects(v, path + (i,))


def open_objects(obj):
    """The objects within a valid document or line that would also accept
    a key their schema does not declare (each shape is tried once a run):
    a schema left open lets a misspelt or stray field through unseen."""
    sample = _sample(obj)
    shape = (obj.get("schema"), "event" in obj,
             frozenset(tuple(p if isinstance(p, str) else 0 for p in path) for path in _objects(sample)))
    if shape in _closed_shapes:
        return []
    opened = []
    for path in _objects(sample):
        node = sample
        for p in path:
            node = node[p]
        node[_UNKNOWN] = 0
        if not problems(sample):
            opened.append("/".join(map(str, path)) or "(top)")
        del node[_UNKNOWN]
    if not opened:
        _closed_shapes.add(shape)
    return opened


def check_all(objs):
    """Raises ValueError naming every violation in a list of objects, and
    every object within them that a schema leaves open."""
    bad = []
    for i, o in enumerate(objs, 1):
        found = problems(o)
        bad += [f"object {i}: {p}" for p in found]
        if not found:
            bad += [f"object {i}: {p}: accepts the undeclared key {_UNKNOWN!r}" for p in open_objects(o)]
    if bad:
        raise ValueError("schema violations:\n" + "\n".join(bad[:40]))
