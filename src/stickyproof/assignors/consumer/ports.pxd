# What every compiled KIP-848 port sees of CPython's C API (setup.py hands each port's compiled
# copy a copy of this file as its augmenting .pxd, under build/cython-pxd). Uncompiled, a port
# defines these names itself.

cdef extern from "Python.h":
    # CPython's own untracking of a tuple of untracked objects (what a collection would do to it
    # later), done at once: the pairs a port hands out, (topic id, range), can hold no cycle.
    void _untrack "PyObject_GC_UnTrack" (object)
    # A list a port fills with untracked pairs, untracked while it is filled and tracked again,
    # once, when the answer is whole: the collections its allocations set off meanwhile then
    # trace none of its lists again and again. Only a list untracked this way is tracked again.
    void _track "PyObject_GC_Track" (object)
