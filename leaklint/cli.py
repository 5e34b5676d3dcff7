"""The command line: parse flags, call the engine, pick a reporter, choose the exit code.

``leaklint [PATHS]`` lints; ``leaklint rules`` and ``leaklint rule CODE`` document the rules. Heavy
modules (libcst, the analysis, the rules) are imported only when a command needs them, so
``leaklint --version`` stays instant.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import click

from leaklint import __version__
from leaklint.console import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    error as print_error,
    error_line as print_error_line,
    exit_status,
    report,
    report_options,
    selected_rules,
    warn_if_nothing_found,
    warning as print_warning,
    write_report,
)
from leaklint.report import FORMATS as OUTPUT_FORMATS

if TYPE_CHECKING:
    from leaklint.findings import Finding

LINT_COMMAND = "check"
LINT_EXIT_STATUS = "Exit status: 0 no findings, 1 findings, 2 usage/config error or a file that could not be linted."


class LeaklintGroup(click.Group):
    """Routes ``leaklint [OPTIONS] [PATHS]`` to the ``check`` command.

    Only an exact subcommand name as the first argument selects a subcommand, so a directory
    called ``rules`` is still lintable as ``./rules`` or ``rules/``. ``-h``/``--help`` first shows
    the overview (:mod:`leaklint.cli_help`), and a first word that is no path but close to a
    command's name is a usage error that names the command.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("prog_name", "leaklint")  # not "python -m leaklint" in usage lines
        return super().main(*args, **kwargs)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in ctx.help_option_names:
            return super().parse_args(ctx, args)
        if not args or args[0] not in self.commands:
            if args:
                self._refuse_command_typo(args[0])
            args = [LINT_COMMAND, *args]
        return super().parse_args(ctx, args)

    def _refuse_command_typo(self, word: str) -> None:
        if not word.isalpha():
            return  # a path ('src/', 'train.py') or an option: nothing to import
        from leaklint.cli_help import command_typo

        problem = command_typo(word, self.list_commands(click.Context(self)))
        if problem is not None:
            print_error(problem)
            sys.exit(EXIT_ERROR)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in the order they are defined: check first

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from leaklint.cli_help import format_overview

        format_overview(self, ctx, formatter, LINT_COMMAND, epilog=LINT_EXIT_STATUS)


@click.group(cls=LeaklintGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """leaklint: find memory-leak anti-patterns in PyTorch training code."""


def run(*args: Any, **kwargs: Any) -> Any:
    """The ``leaklint`` console script."""
    return main(*args, **kwargs)


def _selector_option(name: str, help_text: str):  # type: ignore[no-untyped-def]
    return click.option(name, multiple=True, metavar="CODES", help=help_text)


@main.command(
    LINT_COMMAND,
    short_help="Lint PATHS (the default command: 'leaklint src/' runs it).",
    epilog=(
        "Other commands: 'leaklint rules' lists the rules, 'leaklint rule LL101' shows one rule's "
        "documentation, 'leaklint verify' measures the rules' repros; 'leaklint --help' lists them all. "
        + LINT_EXIT_STATUS
    ),
)
@click.argument("paths", nargs=-1, metavar="[PATHS]...")
@_selector_option("--select", "Enable only these rules (codes or prefixes, comma-separated; ALL for every rule).")
@_selector_option("--extend-select", "Enable these rules on top of the selection (e.g. the off-by-default LL401).")
@_selector_option("--ignore", "Disable these rules (codes or prefixes, comma-separated).")
@click.option("--output-format", "--format", "output_format", type=click.Choice(OUTPUT_FORMATS), default="text", show_default=True,
              help="text: findings with hints and fixes; full: also each finding's source line; concise: one line each; json, json-lines, junit, gitlab (Code Quality), github (annotations), sarif.")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to this file instead of standard output.")
@click.option("--exit-zero", is_flag=True, help="Exit with 0 even when findings are reported (errors still exit 2).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: the number of usable CPUs; small runs stay in-process).")
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Configuration file to use instead of the nearest pyproject.toml.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Keep the result cache here [default: .leaklint_cache at the project root; config: cache-dir].")
@click.option("--no-cache", is_flag=True, help="Lint every file afresh: neither read nor write the result cache (also LEAKLINT_NO_CACHE=1).")
@click.option("--min-confidence", type=click.Choice(["low", "medium", "high"]), help="Hide findings below this confidence [config default: medium].")
@click.option("--stdin-filename", metavar="NAME", help="The name to report (and match per-file-ignores against) for '-' (standard input); with no PATHS, standard input is read.")
@click.option("--force-exclude", is_flag=True, help="Apply exclude and .gitignore even to files named on the command line (for pre-commit).")
@click.option("--show-source", is_flag=True, help="Show the offending source line with a caret under each finding.")
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes in place, then report what remains ('-' prints the fixed source to standard output).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply unsafe fixes (they change behaviour on purpose; read the diff).")
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff of what --fix would change and write nothing (exit 1 if there is a diff).")
@click.option("--show-fixes", is_flag=True, help="With --fix, list every fix applied.")
@click.option("--statistics", is_flag=True, help="Print how many findings each rule reports instead of the findings.")
@click.option("--exclude", "exclude", multiple=True, metavar="PATTERNS", help="Globs of files to leave out, replacing the configured and default ones (comma-separated).")
@click.option("--extend-exclude", multiple=True, metavar="PATTERNS", help="Globs of files to leave out, on top of the configured ones (comma-separated).")
@click.option("--per-file-ignores", multiple=True, metavar="GLOB:CODES", help="Rules to ignore in files matching GLOB ('tests/*:LL201,LL1'), replacing the configured ones.")
@click.option("--extend-per-file-ignores", multiple=True, metavar="GLOB:CODES", help="Like --per-file-ignores, on top of the configured ones.")
@click.option("--add-noqa", is_flag=True, help="Add a '# noqa: CODE' comment to every line with a finding (merged into an existing '# noqa'), then exit.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="With --fix, exit 1 when a fix was applied even if nothing remains (for commit hooks).")
@click.option("--watch", "-w", is_flag=True, help="Lint again whenever a Python file under PATHS changes (Ctrl-C stops).")
@click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default=None, help="Colour the text output: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it), always or never.")
@click.option("--no-color", is_flag=True, help="Never colour the output (the same as --color never).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the findings: no hints, no summary.")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False, path_type=Path), help="Report only findings not recorded in this baseline file [config: baseline].")
@click.option("--write-baseline", "write_baseline_file", type=click.Path(dir_okay=False, path_type=Path), help="Record every finding of this run in this baseline file and exit 0 (2 if a file could not be linted); later runs with --baseline report only new findings.")
@click.version_option(__version__, "--version", prog_name="leaklint", message="%(prog)s %(version)s")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    output_file: str | None,
    exit_zero: bool,
    jobs: int | None,
    config_file: Path | None,
    cache_dir: Path | None,
    no_cache: bool,
    min_confidence: str | None,
    stdin_filename: str | None,
    force_exclude: bool,
    show_source: bool,
    apply_fixes: bool,
    unsafe_fixes: bool,
    show_diff: bool,
    show_fixes: bool,
    no_color: bool,
    quiet: bool,
    baseline_file: Path | None,
    write_baseline_file: Path | None,
    statistics: bool,
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    per_file_ignores: tuple[str, ...],
    extend_per_file_ignores: tuple[str, ...],
    add_noqa: bool,
    exit_non_zero_on_fix: bool,
    watch: bool,
    color: str | None,
) -> None:
    """Lint PATHS (files or directories; default '.'; '-' reads standard input)."""
    from leaklint.config import ConfigError, load_settings
    from leaklint.registry import all_rules

    paths = _paths_to_lint(paths, stdin_filename)
    if unsafe_fixes and not (apply_fixes or show_diff):
        print_warning("--unsafe-fixes has no effect without --fix or --diff")
    known_rules = {code: rule.name for code, rule in all_rules().items()}
    try:
        settings = load_settings(config_file, known_rules=known_rules)
        overrides: dict[str, object] = {}
        if select:
            overrides["select"] = list(select)
        if extend_select:
            overrides["extend_select"] = list(settings.extend_select) + list(extend_select)
        if ignore:
            overrides["ignore"] = list(settings.ignore) + list(ignore)
        if min_confidence:
            overrides["min_confidence"] = min_confidence
        if cache_dir is not None:
            overrides["cache_dir"] = cache_dir.absolute()
        if no_cache:
            overrides["cache"] = False
        if baseline_file is not None:
            overrides["baseline"] = baseline_file.absolute()
        if exclude:
            overrides["exclude"] = _comma_separated(exclude)
        if extend_exclude:
            overrides["extend_exclude"] = list(settings.extend_exclude) + _comma_separated(extend_exclude)
        if per_file_ignores:
            overrides["per_file_ignores"] = _glob_codes(per_file_ignores, "--per-file-ignores")
        if extend_per_file_ignores:
            overrides["per_file_ignores"] = list(overrides.get("per_file_ignores", settings.per_file_ignores)) + _glob_codes(extend_per_file_ignores, "--extend-per-file-ignores")  # type: ignore[call-overload]
        settings = settings.with_overrides(known_rules=known_rules, **overrides)
    except ConfigError as error:
        print_error(str(error))
        sys.exit(EXIT_ERROR)
    if apply_fixes and show_diff:
        print_error("--fix and --diff cannot be combined: --diff shows what --fix would do")
        sys.exit(EXIT_ERROR)
    color_mode = "never" if no_color else (color or "auto")
    if add_noqa:
        if apply_fixes or show_diff or watch or write_baseline_file is not None or "-" in paths:
            print_error("--add-noqa edits the files linted: it cannot be combined with --fix, --diff, --watch, --write-baseline or standard input")
            sys.exit(EXIT_ERROR)
        from leaklint.fixes.command import run_add_noqa

        sys.exit(run_add_noqa(paths, settings, jobs=jobs, force_exclude=force_exclude))
    if exit_non_zero_on_fix and not apply_fixes:
        print_warning("--exit-non-zero-on-fix has no effect without --fix")
    if watch:
        if apply_fixes or show_diff or write_baseline_file is not None or "-" in paths:
            print_error("--watch lints files again as they change: it cannot be combined with --fix, --diff, --write-baseline or standard input")
            sys.exit(EXIT_ERROR)
        from leaklint.watch import watch_and_lint

        sys.exit(watch_and_lint(paths, settings, lambda: _lint(paths, settings, output_format, output_file, exit_zero, jobs, stdin_filename, force_exclude, show_source, color_mode, quiet, statistics=statistics)))
    if write_baseline_file is not None and (show_diff or apply_fixes):
        print_error("--write-baseline records the findings of a lint run: it cannot be combined with --fix or --diff")
        sys.exit(EXIT_ERROR)
    if show_diff or apply_fixes:
        if baseline_file is not None:
            print_warning("--baseline has no effect with --fix or --diff: every fixable finding is fixed")
        from leaklint.fixes.command import FixRequest, run_fix

        request = FixRequest(
            paths=paths, settings=settings, unsafe=unsafe_fixes, diff_only=show_diff, show_fixes=show_fixes,
            output_format=output_format, output_file=output_file, exit_zero=exit_zero, jobs=jobs,
            stdin_filename=stdin_filename, force_exclude=force_exclude, show_source=show_source, color=color_mode, quiet=quiet,
            exit_non_zero_on_fix=exit_non_zero_on_fix,
        )
        sys.exit(run_fix(request))
    sys.exit(_lint(paths, settings, output_format, output_file, exit_zero, jobs, stdin_filename, force_exclude, show_source, color_mode, quiet, write_baseline_file, statistics=statistics))


def _paths_to_lint(paths: tuple[str, ...], stdin_filename: str | None) -> tuple[str, ...]:
    """PATHS, or what their absence means: '.', or standard input when ``--stdin-filename`` is
    given (as in Ruff). ``--stdin-filename`` with paths but no '-' names nothing: a usage error."""
    if stdin_filename is None:
        return paths or (".",)
    if not paths:
        return ("-",)
    if "-" not in paths:
        print_error("--stdin-filename names standard input, but '-' is not among the paths: add '-' to lint standard input")
        sys.exit(EXIT_ERROR)
    return paths


def _lint(
    paths: Sequence[str],
    settings: object,
    output_format: str,
    output_file: str | None,
    exit_zero: bool,
    jobs: int | None,
    stdin_filename: str | None,
    force_exclude: bool,
    show_source: bool,
    color: str,
    quiet: bool,
    write_baseline_file: Path | None = None,
    *,
    statistics: bool = False,
) -> int:
    from leaklint.discovery import discover
    from leaklint.engine import default_jobs, lint_paths
    from leaklint.project import with_project_facts

    known, rules = selected_rules(settings)
    found = discover(paths, settings, force_exclude=force_exclude)  # type: ignore[arg-type]
    warn_if_nothing_found(paths, found)
    jobs = jobs or default_jobs()
    settings = with_project_facts(settings, found.files, jobs=jobs, cache=True)  # type: ignore[arg-type]
    baseline_file = _baseline_path(settings)
    keep_text = show_source or output_format in ("full", "sarif", "gitlab") or baseline_file is not None or write_baseline_file is not None
    result, texts = lint_paths(
        found.files,
        rules,
        settings,  # type: ignore[arg-type]
        jobs=jobs,
        keep_text=keep_text,
        keep_notebook_text=output_format == "github",  # annotations point into the .ipynb file's JSON
        stdin_filename=stdin_filename,
        pre_errors=found.errors,
        cache=_open_cache(settings, rules),
    )
    if write_baseline_file is not None:
        return _write_baseline(write_baseline_file, result, texts)
    options = report_options(output_file, color, show_source, quiet, texts)
    if baseline_file is not None:
        applied = _apply_baseline(baseline_file, result, texts, options)
        if applied is None:
            return EXIT_ERROR
        result, options = applied
    if statistics:
        from leaklint.statistics import render_statistics

        for error in result.errors:
            print_error_line(error)
        if not write_report(render_statistics(result, known, output_format), output_file):
            return EXIT_ERROR
    elif not report(result, known, output_format, options, output_file):
        return EXIT_ERROR
    return exit_status(result, exit_zero)


def _comma_separated(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _glob_codes(values: Sequence[str], option: str) -> list[tuple[str, list[str]]]:
    """``("tests/*:LL201,LL1",)`` as ``[("tests/*", ["LL201", "LL1"])]``; a value without a colon
    is a usage error."""
    pairs = []
    for value in values:
        glob, colon, codes = value.rpartition(":")
        if not colon or not glob.strip():
            print_error(f"{option}: expected GLOB:CODES (such as 'tests/*:LL201'), got {value!r}")
            sys.exit(EXIT_ERROR)
        pairs.append((glob.strip(), _comma_separated([codes])))
    return pairs


def _baseline_path(settings: object) -> Path | None:
    """The baseline file of the run (``--baseline`` or ``baseline`` in the config, relative to
    its folder), or None."""
    configured = getattr(settings, "baseline", None)
    if configured is None:
        return None
    return Path(os.path.join(getattr(settings, "root", "."), configured))


def _shown(path: Path) -> str:
    """``path`` as messages name it: relative to the working directory when it is below it."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def _write_baseline(path: Path, result: Any, texts: dict[str, str]) -> int:
    """Record the run's findings in ``path``; file errors are reported and make the exit 2."""
    from leaklint.baseline import BaselineError, write
    from leaklint.report._paths import printable

    for error in result.errors:
        click.echo(printable(error.describe()), err=True)
    try:
        count = write(path, result.findings, texts, shown=_shown(path))
    except BaselineError as problem:
        print_error(str(problem))
        return EXIT_ERROR
    click.echo(f"leaklint: wrote {count} finding{'s' if count != 1 else ''} to the baseline {_shown(path)}", err=True)
    return EXIT_ERROR if result.errors else EXIT_CLEAN


def _apply_baseline(path: Path, result: Any, texts: dict[str, str], options: Any) -> tuple[Any, Any] | None:
    """The result without the findings ``path`` records, and report options that know them; None
    (after a one-line error) when the baseline cannot be read."""
    from dataclasses import replace

    from leaklint.baseline import BaselineError, compare, read

    try:
        comparison = compare(result.findings, texts, path, read(path, shown=_shown(path)))
    except BaselineError as problem:
        print_error(str(problem))
        return None
    if comparison.stale:
        count, shown = len(comparison.stale), _shown(path)
        print_warning(
            f"{count} entr{'ies' if count != 1 else 'y'} of the baseline {shown} {'match' if count != 1 else 'matches'} no finding any more "
            f"(fixed, or the code changed): run with --write-baseline {shown} to drop {'them' if count != 1 else 'it'}"
        )
    return replace(result, findings=comparison.new), replace(options, baseline_applied=True, baselined=comparison.known)


def _open_cache(settings: object, rules: Sequence[type]) -> object:
    """The run's result cache, or None; with ``--no-cache`` (or ``cache = false``) the cache module
    (hashing, JSON, temporary files) is not even imported."""
    if not getattr(settings, "cache", True):
        return None
    from leaklint.cache import open_cache

    return open_cache(settings, rules)  # type: ignore[arg-type]


@main.command("rules", short_help="List every rule: code, name, severity, fixable, summary.")
@click.option("--format", "output_format", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
def list_rules(output_format: str) -> None:
    """List every rule: code, name, severity, fixable, summary."""
    from leaklint.registry import all_rules
    from leaklint.rules_table import rules_as_json, rules_as_markdown, rules_as_table

    known = all_rules()
    render = {"table": rules_as_table, "json": rules_as_json, "markdown": rules_as_markdown}[output_format]
    click.echo(render(known), nl=False)


@main.command("rule", short_help="Show one rule's documentation and its last measurement.")
@click.argument("code")
def show_rule(code: str) -> None:
    """Print the documentation of one rule (by code, e.g. LL101, or by name), with its runtime repro and
    the numbers the last 'leaklint verify' measured for it."""
    import difflib

    from leaklint.config import digits_misread
    from leaklint.registry import all_rules

    known = all_rules()
    wanted = code.strip()
    rule = known.get(wanted.upper()) or next((r for r in known.values() if r.name == wanted.lower()), None)
    if rule is None:
        prefixed = [c for c in known if c.startswith(wanted.upper())] if wanted else []
        if prefixed:  # 'LL1' selects rules in --select, but a page is one rule's
            print_error(f"'{code}' is the prefix of {', '.join(prefixed)}: 'leaklint rule' shows one rule, e.g. 'leaklint rule {prefixed[0]}'")
            sys.exit(EXIT_ERROR)
        choices = [*known, *(r.name for r in known.values())]
        misread = digits_misread(wanted)
        if misread in known:
            close = [misread]
        else:
            close = difflib.get_close_matches(wanted.upper(), choices, n=3) + difflib.get_close_matches(wanted.lower(), choices, n=3)
        hint = f" (did you mean {', '.join(dict.fromkeys(close))}?)" if close else ""
        print_error(f"unknown rule '{code}'{hint}; 'leaklint rules' lists them")
        sys.exit(EXIT_ERROR)
    page = rule.doc_page()
    if rule.has_repro():
        from leaklint.runtime import last

        page += last.render(rule.code)
    click.echo(page, nl=False)


def _store_results(results, device: str, iterations: int, warmup: int, torch_version: str) -> None:  # type: ignore[no-untyped-def]
    """Keep each measured rule's result for ``leaklint rule`` (a failure to write only warns)."""
    from leaklint.runtime import last
    from leaklint.runtime.report import result_to_dict

    try:
        last.save([result_to_dict(r) for r in results], device=device, torch_version=torch_version, iterations=iterations, warmup=warmup)
    except OSError as error:
        click.echo(f"leaklint: warning: cannot store the results in {last.store_path()}: {error.strerror or error}", err=True)


@main.command(
    "verify",
    short_help="Measure each rule's leaky and fixed repro at runtime (needs torch).",
    epilog=(
        "Exit status: 0 every selected rule confirmed (rules whose framework is not installed, e.g. "
        "tensorflow, are skipped and do not fail the run), 1 a rule not confirmed or its repro "
        "failed or a dependency it needs is missing, 2 usage error or torch missing or broken."
    ),
)
@click.argument("codes", nargs=-1, metavar="[CODES]...")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True, help="Where the repros run (auto: cuda when available).")
@click.option("--iterations", type=click.IntRange(min=3), default=12, show_default=True, help="Measured iterations per variant.")
@click.option("--warmup", type=click.IntRange(min=1), default=3, show_default=True, help="Iterations run first and not judged (lazy buffers, optimizer state).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format (json: schema leaklint.verify/1).")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, writable=True), help="Also draw live bytes per iteration, leaky vs fixed, into this PNG (needs matplotlib).")
def verify(codes: tuple[str, ...], device: str, iterations: int, warmup: int, output_format: str, plot_file: str | None) -> None:
    """Run each rule's repro (leaky and fixed loop body) and measure memory per iteration.

    CODES are rule codes or prefixes (LL1, LL101); default: every rule.
    """
    import importlib.util

    from leaklint.config import did_you_mean, matches_selector
    from leaklint.registry import all_rules

    known = all_rules()
    for code in codes:
        if not any(matches_selector(known_code, code.upper()) for known_code in known):
            hint = did_you_mean(code, {c: rule.name for c, rule in known.items()})
            print_error(f"unknown rule '{code}'{hint}; 'leaklint rules' lists them")
            sys.exit(EXIT_ERROR)
    # Without codes: every rule that has a repro (LL901 is about comments: nothing to measure).
    selected = [rule for c, rule in known.items() if (any(matches_selector(c, code.upper()) for code in codes) if codes else rule.has_repro())]
    if plot_file and not os.path.isdir(os.path.dirname(plot_file) or "."):
        print_error(f"--plot: cannot write {plot_file}: no directory {os.path.dirname(plot_file)}")  # before minutes of measuring
        sys.exit(EXIT_ERROR)
    from leaklint.runtime.repro import TORCH_INSTALL, torch_too_old

    if importlib.util.find_spec("torch") is None:
        print_error(f"the runtime verifier needs torch 2.1 or newer, which leaklint does not install for you: {TORCH_INSTALL}")
        sys.exit(EXIT_ERROR)
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - a broken install fails in many ways (ImportError, OSError for a missing shared library, RuntimeError for a mismatched numpy or CUDA)
        print_error(
            f"torch is installed but failed to import: {type(error).__name__}: {error}\n"
            "  reinstall it with the command https://pytorch.org/get-started/locally/ gives for your platform, "
            "plus --force-reinstall (CPU only: pip install --force-reinstall torch --index-url "
            "https://download.pytorch.org/whl/cpu), then run leaklint verify again"
        )
        sys.exit(EXIT_ERROR)
    if torch_too_old(torch.__version__):
        print_error(f"the runtime verifier needs torch 2.1 or newer, found {torch.__version__}: {TORCH_INSTALL.replace('install', 'install --upgrade', 1)}")
        sys.exit(EXIT_ERROR)

    from leaklint.runtime.driver import resolve_device, verify_rules
    from leaklint.runtime.report import render_json, render_text

    try:
        run_on = resolve_device(device)
    except RuntimeError as error:
        print_error(str(error))
        sys.exit(EXIT_ERROR)
    results = verify_rules(selected, run_on, iterations, warmup, progress=lambda line: click.echo(line, err=True))
    _store_results(results, run_on, iterations, warmup, torch.__version__)
    if output_format == "json":
        click.echo(render_json(results, run_on, iterations, warmup, torch.__version__), nl=False)
    else:
        click.echo(render_text(results), nl=False)
    if plot_file:
        from leaklint.runtime.plot import plot_results

        try:
            plot_results(results, plot_file)
        except ImportError:
            print_error("--plot needs matplotlib: pip install 'leaklint-ml[runtime]'")
            sys.exit(EXIT_ERROR)
        except OSError as problem:
            print_error(f"--plot: cannot write {plot_file}: {problem.strerror or problem}")
            sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if any(result.failed for result in results) else EXIT_CLEAN)


@main.command(
    "run",
    short_help="Run a training script under the meters; confirm its findings.",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
    epilog="Exit status: 0 memory stays flat, 1 memory grows per step, 2 usage error, torch missing, or the script failed or ended too soon.",
)
@click.option("--steps", type=click.IntRange(min=2), default=30, show_default=True, help="Steps to run in all (warm-up included); then the script is stopped.")
@click.option("--warmup", type=click.IntRange(min=1), default=5, show_default=True, help="Steps run first and not measured (optimizer state, caches).")
@click.option("--step", "step_spec", metavar="MODULE:FUNCTION", help="The function that runs one step (e.g. train:train_step, __main__:Evaluator.run_batch); each return from it ends a step. Default: the end of every optimizer.step(), else of every backward().")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True, help="Whose tensor memory to measure (auto: CUDA when the script holds CUDA tensors when measuring starts).")
@click.option("--workers", "measure_workers", is_flag=True, help="Also measure the private memory (USS) of child processes, DataLoader workers, per step (needs psutil); growth over 64 KiB/step counts. On by itself when the script has a finding about workers' memory (LL302).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format (json: schema leaklint.run/1).")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), help="Also draw memory per step, with the top allocation sites, into this PNG (needs matplotlib).")
@click.argument("script", type=click.Path(dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED, metavar="[ARGS]...")
def run_command(steps: int, warmup: int, step_spec: str | None, device: str, measure_workers: bool, output_format: str, plot_file: str | None, script: str, script_args: tuple[str, ...]) -> None:
    """Run SCRIPT (with ARGS) in this process, find its steps (the end of every optimizer.step(),
    else of every backward(), else of the --step function), and after the warm-up measure live
    tensor bytes and host memory per step; stop after --steps. Growth is traced to the lines that
    allocated the accumulating tensors and joined with the static findings of SCRIPT and the
    project files it ran: confirmed, not observed or not reachable."""
    import importlib.util

    from leaklint.runtime.repro import TORCH_INSTALL

    if not os.path.isfile(script):
        print_error(f"no such script: {script}")
        sys.exit(EXIT_ERROR)
    if importlib.util.find_spec("torch") is None:
        print_error(f"leaklint run needs torch, which leaklint does not install for you: {TORCH_INSTALL}")
        sys.exit(EXIT_ERROR)
    from leaklint.runtime.run import ScriptError, StepTarget, TooFewSteps, phase_sizes, run_script

    try:
        phase_sizes(steps, warmup)
        target = StepTarget.parse(step_spec, script) if step_spec else None
    except ValueError as problem:
        print_error(str(problem).replace("steps must", "--steps must").replace("(got steps", "(got --steps").replace(", warmup", ", --warmup"))
        sys.exit(EXIT_ERROR)
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print_error("--device cuda: torch sees no CUDA device here")
            sys.exit(EXIT_ERROR)
    from leaklint.runtime.join import workers_rules

    worker_codes = workers_rules()
    if not measure_workers and worker_codes & {finding.code for finding in _lint_what_ran({os.path.abspath(script): {}})}:
        measure_workers = True  # a finding only the workers' memory can confirm
    try:
        result = run_script(
            script, script_args, steps=steps, warmup=warmup, step=target, device=device, workers=measure_workers,
            script_stdout=sys.stderr if output_format == "json" else None,  # the document alone on stdout
        )
    except (ScriptError, TooFewSteps) as problem:
        print_error(str(problem))
        sys.exit(EXIT_ERROR)
    from leaklint.runtime.join import join, render_json, render_text

    findings = _lint_what_ran(result.lines)
    joined = join(findings, result, worker_codes=worker_codes)
    click.echo(render_json(result, joined) if output_format == "json" else render_text(result, joined), nl=False)
    if plot_file:
        from leaklint.runtime.plot import plot_run

        try:
            plot_run(result, plot_file)
        except ImportError:
            print_error("--plot needs matplotlib: pip install 'leaklint-ml[runtime]'")
            sys.exit(EXIT_ERROR)
        except OSError as problem:
            print_error(f"--plot: cannot write {plot_file}: {problem.strerror or problem}")
            sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if result.grows else EXIT_CLEAN)


def _lint_what_ran(ran: Mapping[str, object]) -> list[Finding]:
    """The findings of the project files that ran (the script first), with the project's own
    configuration and project-wide facts, as ``leaklint`` on those files would report them."""
    from leaklint.config import ConfigError, load_settings
    from leaklint.engine import lint_file
    from leaklint.project import with_project_facts
    from leaklint.registry import all_rules

    known_rules = {code: rule.name for code, rule in all_rules().items()}
    try:
        settings = load_settings(None, known_rules=known_rules)
    except ConfigError as error:
        print_error(str(error))
        sys.exit(EXIT_ERROR)
    files = [name for name in ran if name.endswith(".py")]
    settings = with_project_facts(settings, files)
    _, rules = selected_rules(settings)
    findings: list[Finding] = []
    for name in files:
        outcome = lint_file(name, rules, settings)
        for error in outcome.errors:
            print_error_line(error)
        findings.extend(outcome.findings)
    return findings


@main.command("server", short_help="Run the language server (LSP) for editors: 'leaklint server'.")
@click.option("--stdio", is_flag=True, help="Talk LSP over standard input and output (the default and only transport; accepted because editor clients pass it).")
def server(stdio: bool) -> None:
    """Run leaklint as a Language Server Protocol server: diagnostics as you type, quick fixes,
    "suppress on this line", "fix all safe" and rule docs on hover. Needs the server extra:
    pip install 'leaklint-ml[server]'."""
    try:
        import lsprotocol.types  # noqa: F401 - only to know the extra is there
        import pygls.lsp.server  # noqa: F401
    except ImportError:
        from leaklint.server import INSTALL_HINT

        print_error(INSTALL_HINT)
        sys.exit(EXIT_ERROR)
    from leaklint.server.app import serve

    serve()


@main.command("help", short_help="Show this help, or a command's: 'leaklint help verify'.")
@click.argument("command", required=False)
@click.pass_context
def show_help(ctx: click.Context, command: str | None) -> None:
    """Show the overview of leaklint's commands and options, or COMMAND's own help."""
    from leaklint.cli_help import unknown_command

    parent = ctx.parent
    assert parent is not None
    group = parent.command
    assert isinstance(group, click.Group)
    if command is None:
        click.echo(group.get_help(parent))
        return
    chosen = group.get_command(parent, command)
    if chosen is None:
        print_error(unknown_command(command, group.list_commands(parent)))
        sys.exit(EXIT_ERROR)
    click.echo(chosen.get_help(click.Context(chosen, info_name=command, parent=parent)))
