"""A stand-in for `shortuuid` (not in this machine's package index), for the kittehub harness
only: `uuid()` gives 22-character ids, counted (`kittehub00000000000001`, …, per process) so
that a plan can name the game a session made. Never shipped."""

import itertools

_COUNTER = itertools.count(1)


def uuid(name=None, pad_length=22):
    """The next counted id, `pad_length` characters (the `name` form is not stood in for)."""
    if name is not None:
        raise NotImplementedError("stand-in shortuuid: uuid(name=...) is not stood in for")
    n = str(next(_COUNTER))
    return "kittehub" + n.rjust(pad_length - len("kittehub"), "0")
