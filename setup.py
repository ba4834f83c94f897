"""Compile the replay's hot modules (``simulator/hot_modules.py``) with mypyc on a regular install.

Everything else is in pyproject.toml. The compiled modules are optional: without a C compiler or
the Python headers, or with ``ADVISOR_PURE_PYTHON=1``, the install is pure Python and gives the
same results, only slower. An editable install (``pip install -e .``) stays pure Python, so an
edited module is never shadowed by an older compiled copy of it.
"""

from __future__ import annotations

import os
import runpy
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext

HOT_MODULES = runpy.run_path("simulator/hot_modules.py")["HOT_MODULES"]


class CompileHotModules(build_ext):
    """Translates the hot modules to C at build time, never for an editable install."""

    def run(self) -> None:
        # pip's editable install (PEP 660) finalizes this command first as a regular build and
        # only later as editable, so the extensions exist by now: build none of them in place.
        if self.editable_mode or self.inplace:
            return
        super().run()

    def finalize_options(self) -> None:
        if not (self.editable_mode or self.inplace or os.environ.get("ADVISOR_PURE_PYTHON") == "1"):
            c_sources = os.path.join(self.get_finalized_command("build").build_base, "mypyc")
            self.distribution.ext_modules = _compiled_extensions(c_sources)
        super().finalize_options()


def _compiled_extensions(c_sources: str) -> list:
    """The hot modules as C extensions, each optional (a failed C build leaves it pure)."""
    try:
        from mypyc.build import mypycify

        extensions = mypycify(
            list(HOT_MODULES), opt_level="3", debug_level="0", target_dir=c_sources
        )
    except ImportError as why:
        print(f"htcondor-advisor: pure Python, mypyc is missing ({why})")
        return []
    except SystemExit:
        print("htcondor-advisor: pure Python, mypyc found the type errors above")
        return []
    for extension in extensions:
        extension.optional = True
    return extensions


class WithCompiledModules(Distribution):
    def has_ext_modules(self) -> bool:
        return True  # the extensions are only known once ``CompileHotModules`` runs


# Each build starts empty: a compiled module left in ./build by an earlier install would otherwise
# ship in a pure Python one, or stand in for a module that failed to compile.
with tempfile.TemporaryDirectory(prefix="htcondor-advisor-build-") as build_base:
    setup(
        cmdclass={"build_ext": CompileHotModules},
        distclass=WithCompiledModules,
        options={"build": {"build_base": build_base}},
    )
