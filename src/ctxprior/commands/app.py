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


pass_app = click.make_pass_decorator(AppContext)
