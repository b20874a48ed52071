"""Compiles the KIP-848 server-side ports with Cython, in pure-Python mode, when it can.

The ports' ``.py`` files stay the one source: each is copied to ``build/cython-src`` as
``_compiled_<name>.py`` with the sha256 of that source and ``ports.pxd`` appended (``SOURCE_SHA256``),
``ports.pxd`` copied as its augmenting ``.pxd`` (the C API names the ports use compiled; under
``build/cython-pxd``, laid out by package, where Cython looks a module's own ``.pxd`` up by its
qualified name), and compiled under that name, beside the pure module.
``assignors/consumer/compiled.py`` imports a compiled module only while the hash matches the
``.py`` and ``ports.pxd`` on disk, so an edited port never runs stale. If Cython or the C compiler
fails, the install goes on with the pure-Python ports, saying so in one line.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
PACKAGE = "stickyproof.assignors.consumer"
PACKAGE_DIR = ROOT / "src" / "stickyproof" / "assignors" / "consumer"
# The same list as compiled.PORTS (tests/test_consumer_ports_compiled.py holds them equal).
PORTS = ("range", "uniform_homogeneous", "uniform_heterogeneous", "uniform_heterogeneous_3_9")
COPIES = ROOT / "build" / "cython-src"
DECLARATIONS = ROOT / "build" / "cython-pxd"


def _note(message: str) -> None:
    print(f"stickyproof: {message}; the pure-Python KIP-848 ports will run", file=sys.stderr)


def _copy(name: str) -> Path:
    """``<name>.py`` as ``_compiled_<name>.py`` under build/, the sha256 of it and ``ports.pxd``
    recorded at the end (``compiled.source_sha256``), ``ports.pxd`` as its ``_compiled_<name>.pxd``."""
    source = (PACKAGE_DIR / f"{name}.py").read_bytes()
    declarations = (PACKAGE_DIR / "ports.pxd").read_bytes()
    digest = hashlib.sha256(source + declarations).hexdigest()
    target = COPIES / f"_compiled_{name}.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    pxd = DECLARATIONS.joinpath(*PACKAGE.split("."), f"_compiled_{name}.pxd")
    pxd.parent.mkdir(parents=True, exist_ok=True)
    if not pxd.exists() or pxd.read_bytes() != declarations:
        pxd.write_bytes(declarations)
    text = source.decode("utf-8") + f'\nSOURCE_SHA256 = "{digest}"\n'
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return target


def _extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError as exc:
        _note(f"Cython is not importable ({exc})")
        return []
    try:
        modules = [Extension(f"{PACKAGE}._compiled_{name}", [str(_copy(name).relative_to(ROOT))]) for name in PORTS]
        return cythonize(modules, language_level=3, quiet=True, build_dir=str(ROOT / "build" / "cython-c"),
                         include_path=[str(DECLARATIONS)],
                         compiler_directives={"annotation_typing": False, "binding": False})
    except Exception as exc:  # noqa: BLE001 - any failure leaves the pure ports, said once
        _note(f"cythonizing the ports failed ({type(exc).__name__}: {exc})")
        return []


class OptionalBuildExt(build_ext):
    """``build_ext`` whose failure (no C compiler, a compile error) costs the speed-up, not the
    install: the modules that fail are left out, and one line says so."""

    def run(self) -> None:
        self._failures: list[str] = []
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001
            self._failures.append(f"{type(exc).__name__}: {exc}")
        if self._failures:
            first = " ".join(self._failures[0].split())
            _note(f"compiling the KIP-848 ports failed ({len(self._failures)} of {len(self.extensions)}; "
                  f"{first[:300]}{'...' if len(first) > 300 else ''})")

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._failures.append(f"{ext.name}: {type(exc).__name__}: {exc}")


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
