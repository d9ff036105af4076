"""Which calls are activities. `describe(f)` names the callee; `is_activity` rules on the name.

Not activities: builtins, workflow_sdk/autokitteh, the project's own code, the pure standard
library below, third-party `async def` functions. Everything else is.
"""

import inspect
import types

PURE_MODULES = frozenset(
    """
    builtins abc asyncio base64 binascii bisect _bisect calendar cmath collections collections.abc
    _collections _collections_abc contextlib copy copyreg csv _csv dataclasses datetime _datetime
    decimal _decimal difflib email.utils enum fnmatch fractions functools _functools hashlib _hashlib
    _md5 _sha1 _sha256 _sha512 _sha3 _blake2 heapq _heapq hmac html html.parser inspect io _io
    ipaddress itertools json _json json.decoder json.encoder keyword logging math numbers operator
    _operator pprint re _sre shlex statistics string _string struct _struct textwrap types typing
    unicodedata urllib.parse warnings weakref _weakref zlib traceback
    """.split()
)
PURE_PACKAGES = frozenset({"asyncio", "collections", "json", "logging", "email.utils", "html", "re"})
SDK_PACKAGES = frozenset({"workflow_sdk", "autokitteh"})
# Members of pure modules that are not pure, and pure members of other modules.
ACTIVITY_NAMES = frozenset(
    {
        ("datetime", "datetime.now"),
        ("datetime", "datetime.utcnow"),
        ("datetime", "datetime.today"),
        ("datetime", "date.today"),
    }
)
PURE_NAMES = frozenset(
    {("uuid", "UUID")}
    | {("posixpath", n) for n in ("join", "basename", "dirname", "split", "splitext", "normpath", "isabs")}
)
BUILTIN_TYPES = frozenset(
    {
        str,
        bytes,
        bytearray,
        list,
        dict,
        set,
        frozenset,
        tuple,
        int,
        float,
        complex,
        bool,
        memoryview,
        range,
        slice,
        type(None),
    }
)
DESCRIPTOR_TYPES = (
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
)


def describe(f):
    """(module, qualname, filename) of what a call to `f` runs; filename None when not Python code."""
    if getattr(f, "__hl_activity__", False):
        return "workflow_sdk", "activity", None
    if isinstance(f, types.MethodType):
        f = f.__func__
    if isinstance(f, types.FunctionType):
        return f.__module__, f.__qualname__, f.__code__.co_filename
    if isinstance(f, types.BuiltinFunctionType):
        owner = f.__self__
        if owner is None or isinstance(owner, types.ModuleType):
            module = f.__module__ or getattr(owner, "__name__", None)
            return module, f.__name__, None
        cls = owner if isinstance(owner, type) else type(owner)
        return cls.__module__, f"{cls.__qualname__}.{f.__name__}", None
    if isinstance(f, DESCRIPTOR_TYPES):
        cls = f.__objclass__
        return cls.__module__, f"{cls.__qualname__}.{f.__name__}", None
    if isinstance(f, types.MethodWrapperType):
        cls = type(f.__self__)
        return cls.__module__, f"{cls.__qualname__}.{f.__name__}", None
    if isinstance(f, type):
        return f.__module__, f.__qualname__, None
    cls = type(f)
    return cls.__module__, f"{cls.__qualname__}.__call__", None


def cache_key(f):
    """A stable key for the decision: bound methods and builtin methods key by class and name."""
    if isinstance(f, types.MethodType):
        return f.__func__
    if isinstance(f, types.BuiltinFunctionType):
        owner = f.__self__
        if owner is None or isinstance(owner, (types.ModuleType, type)):
            return f
        return (type(owner), f.__name__)
    if isinstance(f, (types.FunctionType, type, *DESCRIPTOR_TYPES)):
        return f
    if isinstance(f, types.MethodWrapperType):
        return (type(f.__self__), f.__name__)
    return type(f)


def activity_name(f, in_project):
    """The activity's name (`module.qualname`), or None when the call runs directly.

    `in_project(module, filename)` says whether code belongs to the project.
    """
    module, qualname, filename = describe(f)
    if in_project(module, filename):
        return None
    if module is None:
        return f"?.{qualname}"
    if module.partition(".")[0] in SDK_PACKAGES:
        return None
    if (module, qualname) in ACTIVITY_NAMES:
        return f"{module}.{qualname}"
    if module in PURE_MODULES or (module, qualname) in PURE_NAMES:
        return None
    if any(module.startswith(p + ".") for p in PURE_PACKAGES):
        return None
    target = f.__func__ if isinstance(f, types.MethodType) else f
    if inspect.iscoroutinefunction(target) or inspect.isasyncgenfunction(target):
        return None
    return f"{module}.{qualname}"
