"""Click options made from the API's declared options (``ctxprior.api.score_options()``: each an
``Option`` with its flag, help, default, type, choices and validity), so a command restates none
of them. The text is parsed and checked by the declaration (``Option.parse``, ``Option.check``):
a bad value is the same one-line UserError the API raises (exit code 2), before the warehouse is
opened."""

from __future__ import annotations

import click


class DeclaredType(click.ParamType):
    """A declared option's value: parsed and checked by its declaration; ``--help`` shows its
    choices (read when shown: a registry's names) or its metavar."""

    def __init__(self, option) -> None:
        self.option = option
        self.name = {int: "integer", float: "float"}.get(option.kind, "text")

    def get_metavar(self, param, ctx=None):
        names = () if self.option.listed else self.option.names()
        if names:
            return "[" + "|".join(names) + "]"
        return self.name.upper() + ("|auto" if self.option.auto else "")

    def convert(self, value, param, ctx):
        if not isinstance(value, str):  # already the API's value (a default)
            return value
        value = self.option.parse(value)
        if self.option.multiple:  # one of the repeated values
            self.option.check((value,))
            return value
        return self.option.check(value)


class DeclaredOption(click.Option):
    """Its help is the declaration's, read when shown (the estimator registry's lines), by
    ``--help`` and by the generated CLI reference alike."""

    def __init__(self, *args, declared, **kwargs) -> None:
        self.declared = declared
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str:
        return self.declared.help_text()

    @help.setter
    def help(self, value) -> None:  # click's __init__ sets it; the declaration holds it
        pass


def click_param(opt):
    """The click argument or option of a declared ``Option`` (its keyword is the API's)."""
    if opt.argument:
        kind = _path_type(opt) or DeclaredType(opt)
        return click.Argument(
            [opt.name], required=opt.required, type=kind, metavar=opt.metavar, nargs=-1 if opt.multiple else 1
        )
    return click_option(opt)(lambda: None).__click_params__[0]


def click_option(opt):
    """The click option decorator of a declared ``Option`` (its keyword is the API's)."""
    if opt.argument:
        return _argument(opt)
    if opt.kind is bool:
        return click.option(opt.flag, opt.name, is_flag=True, default=bool(opt.default), help=opt.help_text())
    kwargs = {"default": opt.default, "show_default": opt.default is not None or opt.auto}
    if opt.bare is not None:
        kwargs.update(is_flag=False, flag_value=opt.bare, show_default=False)
    if (opt.listed and opt.default is not None) or opt.auto:
        kwargs["default"] = opt.text(opt.default)
    if opt.required:  # no default at all: click 8.3 takes an explicit None as given
        kwargs.update(required=True, show_default=False)
        del kwargs["default"]
    return click.option(
        opt.flag,
        opt.name,
        cls=DeclaredOption,
        declared=opt,
        type=_path_type(opt) or DeclaredType(opt),
        metavar=opt.metavar,
        multiple=opt.multiple,
        help=opt.help_text() if isinstance(opt.help, str) else "",
        **kwargs,
    )


def _path_type(opt):
    """click's path type for a declared folder or file (it says "is a file" / "is a directory")."""
    if opt.directory:
        return click.Path(file_okay=False)
    return click.Path(dir_okay=False) if opt.file else None


def _argument(opt):
    def decorate(f):
        f.__click_params__ = [*getattr(f, "__click_params__", []), click_param(opt)]
        return f

    return decorate


def declared_options(options, names=None, spelled=None):
    """A decorator adding the click arguments and options of ``options`` (those in ``names``, if
    given) in declared order; API-only options (no flag, not an argument) are left out unless
    ``spelled`` (API keyword -> click decorator) gives the command line's own spelling of one."""

    def decorate(f):
        for opt in reversed(options):
            if names is not None and opt.name not in names:
                continue
            if opt.name in (spelled or {}):
                f = spelled[opt.name](f)
            elif opt.flag or opt.argument:
                f = click_option(opt)(f)
        return f

    return decorate
