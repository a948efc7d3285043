"""What every command receives: the warehouse path and wait from the root options (``pass_app``)."""

from __future__ import annotations

from dataclasses import dataclass

import click


@dataclass
class AppContext:
    db: str
    wait: float

    def api(self, write: bool = False):
        """The Python API's Warehouse for --db / --wait (read-only unless write=True). Opened by its
        first call, so a command's own input errors come before a missing warehouse's."""
        from .. import api

        return api.Warehouse(self.db, write=write, wait=self.wait, check=False)

    def open(self, read_only: bool = False):
        """The low-level store, through the API (``with app.open() as store:``), for commands that
        call a library function with it; a command should call one API method instead."""
        return self.api(write=not read_only).connect(write=not read_only)


pass_app = click.make_pass_decorator(AppContext)
