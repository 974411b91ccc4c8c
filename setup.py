"""The build's one addition to pyproject.toml: the man pages, written from the click commands.

`install_data` (which a wheel, an editable wheel and a plain install all run) writes them with
gitstate/cli/manpages.py from this source tree, then installs them under share/man/man1 of the
prefix, where `man` and `git help agy-state` find them (docs/commands.md, "Help and man pages").
The commands import click and pygit2, so both are build requirements too (pyproject.toml).
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.dist import Distribution

# The class setuptools itself runs (distutils' own: setuptools has no module of its own for it).
install_data = Distribution().get_command_class("install_data")

MAN_DIR = "share/man/man1"
HERE = os.path.dirname(os.path.abspath(__file__))


class InstallDataWithManpages(install_data):
    def run(self) -> None:
        sys.path.insert(0, HERE)
        from gitstate.cli import manpages

        build_base = self.get_finalized_command("build").build_base
        written = manpages.write(os.path.join(build_base, "man1"))
        self.data_files = [(MAN_DIR, written)]
        super().run()


class WithData(Distribution):
    """An editable install (`pip install -e`) installs the data files too: setuptools' editable
    wheel asks for `has_data`, a method only `has_data_files` exists for."""

    def has_data(self) -> bool:
        return bool(self.has_data_files())


# The placeholder entry makes setuptools run install_data at all; run() fills it.
setup(
    distclass=WithData,
    cmdclass={"install_data": InstallDataWithManpages},
    data_files=[(MAN_DIR, [])],
)
