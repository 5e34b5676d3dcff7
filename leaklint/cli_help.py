"""The command line's own help: the overview, ``leaklint help [COMMAND]``, and command typos.

``leaklint [PATHS]`` lints, so the overview (``leaklint --help``, ``leaklint help``) is the lint
command's options under a usage line that shows both shapes of the command, with every command
and what it does listed first. A first word that is neither a command nor an existing path, but
close to a command's name (``leaklint verfy``), is a typo: saying "no such file or directory"
about it alone would leave the user guessing.
"""

from __future__ import annotations

import os

import click

#: The arguments the overview's usage line shows after the program's name.
OVERVIEW_USAGE = "[OPTIONS] [PATHS]... | {prog} COMMAND [ARGS]..."
OVERVIEW_TEXT = (
    "Find memory-leak anti-patterns in PyTorch training code.\n\n"
    "With no command, leaklint lints PATHS (files or directories; default '.'; '-' reads standard "
    "input) with the options below: 'leaklint src/' is 'leaklint check src/'. 'leaklint help "
    "COMMAND' or 'leaklint COMMAND --help' shows a command's own help."
)


def format_overview(group: click.Group, ctx: click.Context, formatter: click.HelpFormatter, lint_command: str, *, epilog: str) -> None:
    """``leaklint --help``: usage, description, the commands, the lint command's options, ``epilog``."""
    formatter.write_usage(ctx.command_path, OVERVIEW_USAGE.format(prog=ctx.command_path))
    formatter.write_paragraph()
    with formatter.indentation():
        formatter.write_text(OVERVIEW_TEXT)
    group.format_commands(ctx, formatter)
    lint = group.commands[lint_command]
    lint_ctx = click.Context(lint, info_name=lint_command, parent=ctx)
    lint.format_options(lint_ctx, formatter)
    formatter.write_paragraph()
    with formatter.indentation():
        formatter.write_text(epilog)


def command_typo(word: str, commands: list[str]) -> str | None:
    """The one-line error for a first word that looks like a misspelt command, or None.

    A word is taken for a command only when nothing of that name exists (``leaklint rulez`` may be
    a directory) and it is a bare word, not a path such as ``train.py`` or ``src/``.
    """
    if not word.isalpha() or os.path.lexists(word):
        return None
    import difflib  # only for a word that may be a typo: every run asks this of its first argument

    close = difflib.get_close_matches(word.lower(), commands, n=2, cutoff=0.75)
    if not close:
        return None
    names = " or ".join(f"'{name}'" for name in close)
    return f"{word}: no such file or directory; did you mean the command {names}?"


def unknown_command(word: str, commands: list[str]) -> str:
    """The error of ``leaklint help WORD`` for a command that does not exist."""
    import difflib

    close = difflib.get_close_matches(word.lower(), commands, n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(name) for name in close)}?)" if close else ""
    return f"no command '{word}'{hint}; the commands are {', '.join(commands)}"
