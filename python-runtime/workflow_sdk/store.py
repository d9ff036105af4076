"""The project's key-value store, shared by all its sessions (AutoKitteh's `store`).

Every function is one `store` request; the service applies it atomically and, in a durable
session, journals the reply. Values travel in the form of `values.py` (big ints exact).
Outside a session (unit tests of your handlers) the store is a dict in this process.
"""

import enum
import sys
import types
from collections.abc import MutableMapping

from . import seam, values
from .service import call

MAX_KEY = 256


class Op(enum.StrEnum):
    """The operations of `mutate_value`."""

    SET = "set"
    GET = "get"
    DEL = "del"
    ADD = "add"
    CHECK_AND_SET = "check_and_set"


_local = {}  # outside a session: key -> wire form
_FUNCTION = {
    "get": "get_value",
    "set": "set_value",
    "del": "del_value",
    "add": "add_values",
    "check_and_set": "check_and_set_value",
    "list_keys": "list_values_keys",
    "publish": "publish_value",
    "unpublish": "unpublish_value",
    "public_url": "get_store_public_url",
}


def _check_key(key):
    if not isinstance(key, str) or not key or len(key) > MAX_KEY:
        raise ValueError(f"store: a key is a non-empty string of at most {MAX_KEY} characters, got {key!r}")


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what}: value must be an int or a float, got {type(value).__name__}")
    return value


def _local_op(op, key, args):
    """The same semantics as the service, on a dict (outside a session)."""
    if op == "get":
        return _local.get(key)
    if op == "set":
        if args[0] is None:
            _local.pop(key, None)
        else:
            _local[key] = args[0]
        return None
    if op == "del":
        _local.pop(key, None)
        return None
    if op == "add":
        current = values.decode(_local.get(key))
        add = values.decode(args[0])
        total = add if current is None else _number(current, "add_values") + add
        _local[key] = values.encode(total)
        return _local[key]
    if op == "check_and_set":
        if _local.get(key) != args[0]:
            return False
        _local_op("set", key, [args[1]])
        return True
    if op == "list_keys":
        return sorted(_local)
    if op == "public_url":
        raise ValueError("store: no public URL outside a session")
    return None  # publish / unpublish


def _store(op, key, *args):
    """One store request; arguments and the reply in their wire form."""
    if key is not None:
        _check_key(key)
    fields = {"op": op, "args": list(args)}
    if key is not None:
        fields["key"] = key
    if seam.current is None:
        return _local_op(op, key, list(args))
    return call(_FUNCTION[op], "store", fields)


def get_value(key):
    """The value stored under `key`, or None."""
    return values.decode(_store("get", key))


def set_value(key, value):
    """Store `value` under `key` (None deletes it). `AutoKittehError` when it is over the size limit."""
    _store("set", key, values.encode(value))


def del_value(key):
    """Delete `key` (no error when it is absent)."""
    _store("del", key)


def add_values(key, value):
    """Atomically add a number to the one under `key` (absent: start from `value`); the new value.

    int + int stays an int, exact however large; a float on either side makes a float.
    """
    _number(value, "add_values")
    return values.decode(_store("add", key, values.encode(value)))


def check_and_set_value(key, expected_value, new_value):
    """Atomically set `key` to `new_value` if it holds `expected_value` (None: absent); True if set."""
    return bool(_store("check_and_set", key, values.encode(expected_value), values.encode(new_value)))


def mutate_value(key, op, *args):
    """Apply `op` ("set", "get", "del", "add", "check_and_set") to `key`; what that op returns."""
    try:
        op = Op(op)
    except ValueError:
        raise ValueError(
            f"mutate_value: unknown op {op!r}; one of {', '.join(o.value for o in Op)}"
        ) from None
    fn = {
        Op.SET: set_value,
        Op.GET: get_value,
        Op.DEL: del_value,
        Op.ADD: add_values,
        Op.CHECK_AND_SET: check_and_set_value,
    }[op]
    try:
        return fn(key, *args)
    except TypeError as e:
        if "positional argument" in str(e):
            raise TypeError(f"mutate_value: wrong number of arguments for op {op.value!r}") from None
        raise


def list_values_keys():
    """All keys of the store, sorted."""
    return list(_store("list_keys", None))


def publish_value(key):
    """Make `key` readable without a token at `get_store_public_url()/<key>`."""
    _store("publish", key)


def unpublish_value(key):
    """Stop publishing `key`."""
    _store("unpublish", key)


def get_store_public_url():
    """The base URL under which published values are served."""
    return _store("public_url", None)


class Store(MutableMapping):
    """The store as a mapping: `store["k"] = 1`, `store["k"]`, `"k" in store`, `del store["k"]`.

    As in AutoKitteh, a missing key reads as None; read-modify-write through it is not atomic
    (use `add_values` / `check_and_set_value`).
    """

    def __getitem__(self, key):
        return get_value(key)

    def __setitem__(self, key, value):
        set_value(key, value)

    def __delitem__(self, key):
        del_value(key)

    def __contains__(self, key):
        return get_value(key) is not None

    def __iter__(self):
        return iter(list_values_keys())

    def __len__(self):
        return len(list_values_keys())

    def keys(self):
        return list_values_keys()

    def get(self, key, default=None):
        value = get_value(key)
        return default if value is None else value


store = Store()


class _StoreModule(types.ModuleType):
    """This module is a store view too: `import autokitteh.store` rebinds `autokitteh.store` to the
    module, and code written for AutoKitteh then still says `autokitteh.store["k"]`."""

    def __getitem__(self, key):
        return store[key]

    def __setitem__(self, key, value):
        store[key] = value

    def __delitem__(self, key):
        del store[key]

    def __contains__(self, key):
        return key in store

    def __iter__(self):
        return iter(store)

    def __len__(self):
        return len(store)


def keys():
    """All keys (the module as a store view)."""
    return list_values_keys()


def get(key, default=None):
    """`store.get` on the module as a store view."""
    return store.get(key, default)


sys.modules[__name__].__class__ = _StoreModule
