"""The session protocol's one definition, `protocol.json` (shipped in this package), as a validator.

The service's TypeScript checks the same file's messages (src/runtime/python/protocol.ts), and both
sides' tests load the same fixtures (tests/fixtures/protocol.json). `validate` fills in defaults in
place, so the runner can read `start["journal"]` and friends without `.get`.
"""

import copy
import json
import math
import re
from importlib import resources

from ..errors import ProtocolError

SPEC = json.loads(resources.files(__package__).joinpath("protocol.json").read_text(encoding="utf-8"))
FORMATS = {
    name: (re.compile(f["pattern"], re.S), f.get("length_multiple_of", 1))
    for name, f in SPEC["formats"].items()
}


def _is_integer(value):
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, float) and value.is_integer()
    )


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


TYPES = {
    "string": (lambda x: isinstance(x, str), "a string"),
    "integer": (_is_integer, "an integer"),
    "number": (_is_number, "a number"),
    "boolean": (lambda x: isinstance(x, bool), "a boolean"),
    "object": (lambda x: isinstance(x, dict), "an object"),
    "map": (lambda x: isinstance(x, dict), "an object"),
    "array": (lambda x: isinstance(x, list), "a list"),
    "any": (lambda x: True, "anything"),
}


def resolve(spec):
    """A field spec with its `ref` (a name under `types`) merged in."""
    if "ref" not in spec:
        return spec
    base = resolve(SPEC["types"][spec["ref"]])
    return {**base, **{k: v for k, v in spec.items() if k != "ref"}}


def messages(direction=None):
    """The message types (of one direction, if given)."""
    return [name for name, m in SPEC["messages"].items() if direction in (None, m["direction"])]


def validate(msg, direction=None):
    """Check one decoded message against its type's spec, filling in defaults; returns it.

    Raises ProtocolError naming the first problem, for an unknown type (or one of the other
    direction) too.
    """
    kind = msg.get("type") if isinstance(msg, dict) else None
    spec = SPEC["messages"].get(kind) if isinstance(kind, str) else None
    if spec is None or (direction is not None and spec["direction"] != direction):
        raise ProtocolError(f"unknown message type {kind!r}")
    _members(msg, spec, f"{kind} message:")
    return msg


def _fail(path, text):
    raise ProtocolError(f"{path} {text}")


def _where(path, name):
    return f"{path} {name}" if path.endswith(":") else f"{path}.{name}"


def _members(obj, spec, path):
    """The known members of an object (others are ignored), then the rules between them."""
    for name, field in spec.get("fields", {}).items():
        field = resolve(field)
        where = _where(path, name)
        if obj.get(name) is None and "default" in field and (name not in obj or field.get("nullable")):
            obj[name] = copy.deepcopy(field["default"])
        if name not in obj:
            if not field.get("optional"):
                _fail(where, "is missing")
            continue
        _check(obj[name], field, where)
    for name, field in spec.get("fields", {}).items():
        for other, value in resolve(field).get("required_when", {}).items():
            if obj.get(other) == value and obj.get(name) is None:
                _fail(_where(path, name), f"is required when {other} is {json.dumps(value)}")
    for group in spec.get("exactly_one_of", []):
        if sum(obj.get(n) is not None for n in group) != 1:
            _fail(path, f"needs exactly one of {', '.join(group)}")
    for group in spec.get("at_least_one_of", []):
        if all(obj.get(n) is None for n in group):
            _fail(path, f"needs {' or '.join(group)}")


def _formatted(value, pattern, multiple_of):
    return len(value) % multiple_of == 0 and pattern.fullmatch(value) is not None


def _check(value, spec, path):
    if value is None:
        if spec.get("nullable") or spec.get("type", "any") == "any":
            return
        _fail(path, f"must be {TYPES[spec.get('type', 'any')][1]}, not null")
    test, what = TYPES[spec.get("type", "any")]
    if not test(value):
        _fail(path, f"must be {what}")
    if "const" in spec and value != spec["const"]:
        _fail(path, f"must be {json.dumps(spec['const'])}")
    if "enum" in spec and value not in spec["enum"]:
        _fail(path, f"must be one of {', '.join(map(json.dumps, spec['enum']))}")
    if _is_number(value):
        if "min" in spec and value < spec["min"]:
            _fail(path, f"must be at least {spec['min']}")
        if "max" in spec and value > spec["max"]:
            _fail(path, f"must be at most {spec['max']}")
        if "exclusive_min" in spec and value <= spec["exclusive_min"]:
            _fail(path, f"must be more than {spec['exclusive_min']}")
    if isinstance(value, str):
        if "format" in spec and not _formatted(value, *FORMATS[spec["format"]]):
            _fail(path, f"must be {spec['format'].replace('_', ' ')}")
        if "pattern" in spec and not re.search(spec["pattern"], value):
            _fail(path, f"must be {spec.get('doc', 'like ' + spec['pattern'])}")
    if isinstance(value, list):
        if len(value) < spec.get("min_items", 0):
            _fail(path, f"must have at least {spec['min_items']} items")
        for i, item in enumerate(value):
            if spec.get("seq_is_index") and not (isinstance(item, dict) and item.get("seq") == i):
                _fail(f"{path}[{i}]", f"must be an object with seq {i}")
            if "items" in spec:
                _check(item, resolve(spec["items"]), f"{path}[{i}]")
    if isinstance(value, dict):
        if "values" in spec:
            for key, item in value.items():
                _check(item, resolve(spec["values"]), f"{path}.{key}")
        if "variant" in spec:
            case = spec["cases"].get(value.get(spec["variant"]))
            if case is None:
                _fail(f"{path}.{spec['variant']}", f"must be one of {', '.join(spec['cases'])}")
            _members(value, case, path)
        _members(value, spec, path)
