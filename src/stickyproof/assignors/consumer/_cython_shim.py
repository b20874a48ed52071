"""What the ports use of Cython's pure-Python mode, inert, for a run without Cython installed
(Cython is a build dependency only): setup.py compiles the ports where it is installed."""

from __future__ import annotations

__all__ = ["compiled", "int", "long", "longlong", "Py_ssize_t", "bint", "double", "locals", "cclass", "cfunc", "ccall",
           "inline", "declare", "final", "boundscheck", "wraparound", "returns", "exceptval"]

compiled = False


class _CType:
    """A C type's name; ``[:]`` on it (a typed memoryview) is the same inert name."""

    def __getitem__(self, _item):
        return self


int = long = longlong = Py_ssize_t = bint = _CType()  # noqa: A001 - Cython's names
double = float


def _identity(fn):
    return fn


def locals(**_types):  # noqa: A001 - Cython's name
    return _identity


def returns(_type):
    return _identity


def exceptval(*_args, **_kwargs):
    return _identity


def boundscheck(_flag):
    return _identity


def wraparound(_flag):
    return _identity


cclass = cfunc = ccall = inline = final = _identity


def declare(_type=None, value=None, **_kwargs):
    return value
