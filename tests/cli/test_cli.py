"""The command line end to end: output, exit codes, options, subcommands."""

from __future__ import annotations

import json

import pytest

from conftest import CLEAN_LOOP, LEAKY_LOOP, ROOT, run_leaklint, text


def test_a_leaky_file_is_reported_with_a_hint_and_a_summary(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("train.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 1, err
    assert out.splitlines() == [
        "train.py:10:9: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive",
        "    help: accumulate loss.item() (a float) or loss.detach() (a tensor)",
        "    fix (safe): Detach 'loss'",
        "Found 1 finding (1 leak) in 1 file; 1 fixable with --fix",
    ]
    assert err == ""


def test_a_clean_file_exits_zero(project):
    (project / "train.py").write_text(CLEAN_LOOP)
    result = run_leaklint("train.py", cwd=project)
    assert result.returncode == 0
    assert text(result)[0].strip() == "All checks passed!"


def test_default_path_is_the_current_directory(project):
    (project / "pkg").mkdir()
    (project / "pkg" / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint(cwd=project)
    assert result.returncode == 1
    assert text(result)[0].startswith("pkg/train.py:10:9: LL101")


def test_exit_zero_keeps_findings_but_exits_0(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--exit-zero", "train.py", cwd=project)
    assert result.returncode == 0
    assert "LL101" in text(result)[0]


def test_ignore_and_select_by_prefix(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    assert run_leaklint("--ignore", "LL1", "train.py", cwd=project).returncode == 0
    assert run_leaklint("--select", "LL2,LL4", "train.py", cwd=project).returncode == 0
    assert run_leaklint("--select", "LL1", "train.py", cwd=project).returncode == 1


def test_quiet_prints_only_finding_lines(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    out, _ = text(run_leaklint("-q", "train.py", cwd=project))
    assert out.splitlines() == [
        "train.py:10:9: LL101 [leak, high confidence] 'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive"
    ]


def test_show_source_prints_the_line_and_a_caret(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    out, _ = text(run_leaklint("--show-source", "train.py", cwd=project))
    assert "total_loss += loss" in out
    caret_line = next(line for line in out.splitlines() if "^" in line)
    assert caret_line.count("^") == len("total_loss += loss")


def test_json_output_lists_every_field(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--format", "json", "train.py", cwd=project)
    [finding] = json.loads(result.stdout)
    assert finding == {
        "path": "train.py",
        "line": 10,
        "column": 9,
        "end_line": 10,
        "end_column": 27,
        "code": "LL101",
        "name": "loss-accumulation",
        "severity": "leak",
        "confidence": "high",
        "message": "'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive",
        "help": "accumulate loss.item() (a float) or loss.detach() (a tensor)",
        "fix": {
            "message": "Detach 'loss'",
            "applicability": "safe",
            "edits": [{"content": "loss.detach()", "location": {"line": 10, "column": 23}, "end_location": {"line": 10, "column": 27}}],
        },
        "runtime": "leaklint verify LL101",
    }


def test_github_output_is_one_workflow_command_per_finding(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    out, _ = text(run_leaklint("--format", "github", "train.py", cwd=project))
    assert out.splitlines() == [
        "::warning file=train.py,line=10,col=9,endLine=10,endColumn=27,title=LL101 loss-accumulation::"
        "'loss' is accumulated into 'total_loss' with its autograd graph; every iteration's graph stays alive"
    ]


def test_output_file_receives_the_report(project):
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("--format", "json", "--output-file", "report.json", "train.py", cwd=project)
    assert result.returncode == 1
    assert result.stdout == b""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "LL101"


def test_min_confidence_low_shows_name_only_guesses(project):
    source = "total = 0\nfor batch in loader:\n    loss = compute(batch)\n    total += loss\n"
    (project / "guess.py").write_text(source)
    assert run_leaklint("guess.py", cwd=project).returncode == 0
    result = run_leaklint("--min-confidence", "low", "--format", "json", "guess.py", cwd=project)
    assert [f["confidence"] for f in json.loads(result.stdout)] == ["low"]


def test_stdin_is_linted_and_named_by_stdin_filename(project):
    result = run_leaklint("-", "--stdin-filename", "train.py", cwd=project, input=LEAKY_LOOP.encode())
    assert result.returncode == 1
    assert text(result)[0].startswith("train.py:10:9: LL101")
    anonymous = run_leaklint("-", cwd=project, input=LEAKY_LOOP.encode())
    assert text(anonymous)[0].startswith("-:10:9: LL101")


def test_jobs_two_gives_the_same_output_as_jobs_one(project):
    for index in range(24):
        (project / f"train_{index:02}.py").write_text(LEAKY_LOOP if index % 3 else CLEAN_LOOP)
    one = run_leaklint("--jobs", "1", ".", cwd=project)
    two = run_leaklint("--jobs", "2", ".", cwd=project)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    assert one.stdout.count(b"LL101") == 16


def test_version():
    result = run_leaklint("--version")
    assert result.returncode == 0
    assert text(result)[0].startswith("leaklint ")


def test_unknown_option_is_a_usage_error(project):
    result = run_leaklint("--no-such-option", cwd=project)
    assert result.returncode == 2
    assert "No such option" in text(result)[1]


def test_bad_selector_on_the_command_line_is_a_usage_error(project):
    result = run_leaklint("--select", "LL1x", ".", cwd=project)
    assert result.returncode == 2
    assert "--select" in text(result)[1]


def test_rules_lists_every_rule_as_a_table_and_as_json():
    table, _ = text(run_leaklint("rules"))
    assert table.splitlines()[0].split() == ["CODE", "NAME", "SEVERITY", "FIXABLE", "DEFAULT", "SUMMARY"]
    assert any(line.startswith("LL101  loss-accumulation") for line in table.splitlines())
    rows = json.loads(run_leaklint("rules", "--format", "json").stdout)
    assert {row["code"] for row in rows} >= {"LL101", "LL102", "LL201", "LL401"}
    assert set(rows[0]) == {"code", "name", "severity", "fixable", "default_enabled", "summary", "measured"}


def test_rule_prints_documentation_with_every_section():
    out, _ = text(run_leaklint("rule", "LL101"))
    for section in ("What it finds", "Why it matters", "Example", "Use instead", "Known false positives"):
        assert f"## {section}" in out
    assert text(run_leaklint("rule", "loss-accumulation"))[0] == out


def test_unknown_rule_suggests_a_close_one():
    result = run_leaklint("rule", "LL10l")
    assert result.returncode == 2
    assert "did you mean LL101" in text(result)[1]


def test_a_prefix_given_to_rule_names_the_rules_it_covers():
    from leaklint.registry import all_rules

    covered = [code for code in all_rules() if code.startswith("LL10")]
    result = run_leaklint("rule", "LL10")
    assert result.returncode == 2 and result.stdout == b""
    assert text(result)[1] == (
        f"leaklint: error: 'LL10' is the prefix of {', '.join(covered)}: "
        f"'leaklint rule' shows one rule, e.g. 'leaklint rule {covered[0]}'\n"
    )


def test_a_directory_named_like_a_subcommand_is_lintable(project):
    (project / "rules").mkdir()
    (project / "rules" / "train.py").write_text(LEAKY_LOOP)
    for spelling in ("./rules", "rules/"):
        result = run_leaklint(spelling, cwd=project)
        assert result.returncode == 1, spelling
        assert text(result)[0].startswith("rules/train.py:10:9: LL101"), spelling
    assert run_leaklint("check", "rules", cwd=project).returncode == 1


def test_our_own_rules_directory_is_lintable_and_clean():
    result = run_leaklint("./rules", cwd=ROOT)
    assert result.returncode == 0, text(result)


def test_config_is_found_upward_and_command_line_flags_override_it(project):
    (project / "pyproject.toml").write_text('[tool.leaklint]\nignore = ["LL101"]\n')
    (project / "src").mkdir()
    (project / "src" / "train.py").write_text(LEAKY_LOOP)
    assert run_leaklint("train.py", cwd=project / "src").returncode == 0
    assert run_leaklint("--select", "LL101", "--ignore", "LL2", "train.py", cwd=project / "src").returncode == 0
    overridden = run_leaklint("--config", "other.toml", "train.py", cwd=project / "src")
    assert overridden.returncode == 2 and "other.toml: config file not found" in text(overridden)[1]
    (project / "src" / "other.toml").write_text('select = ["LL1"]\n')
    assert run_leaklint("--config", "other.toml", "train.py", cwd=project / "src").returncode == 1


def test_per_file_ignores_from_the_config(project):
    (project / "pyproject.toml").write_text('[tool.leaklint.per-file-ignores]\n"scripts/*.py" = ["LL101"]\n')
    for folder in ("scripts", "src"):
        (project / folder).mkdir()
        (project / folder / "train.py").write_text(LEAKY_LOOP)
    out, _ = text(run_leaklint(".", cwd=project))
    assert "src/train.py:10:9: LL101" in out and "scripts/" not in out


def test_a_bad_config_names_the_key_and_exits_2(project):
    (project / "pyproject.toml").write_text('[tool.leaklint]\nmin-confidence = "extreme"\nselect = ["LL1"]\n')
    (project / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("train.py", cwd=project)
    out, err = text(result)
    assert result.returncode == 2 and out == ""
    assert err.strip() == (
        "leaklint: error: pyproject.toml: [tool.leaklint] min-confidence: expected one of low, medium, high, got 'extreme'"
    )


def test_an_unknown_config_key_is_an_error(project):
    (project / "pyproject.toml").write_text('[tool.leaklint]\nselct = ["LL1"]\n')
    result = run_leaklint(".", cwd=project)
    assert result.returncode == 2
    assert "unknown key 'selct' (did you mean 'select'?)" in text(result)[1]


def test_inline_suppressions_end_to_end(project):
    (project / "train.py").write_text(LEAKY_LOOP.replace("total_loss += loss", "total_loss += loss  # noqa: LL101"))
    assert run_leaklint("train.py", cwd=project).returncode == 0


def test_gitignored_files_are_skipped_when_walking_but_not_when_named(project):
    (project / ".git").mkdir()  # a repository root: its .gitignore covers the whole tree
    (project / ".gitignore").write_text("generated/\n")
    (project / "generated").mkdir()
    (project / "generated" / "train.py").write_text(LEAKY_LOOP)
    assert run_leaklint(".", cwd=project).returncode == 0
    assert run_leaklint("generated/train.py", cwd=project).returncode == 1
    assert run_leaklint("--force-exclude", "generated/train.py", cwd=project).returncode == 0


# --- help and command names ------------------------------------------------------------------------
COMMANDS = ("check", "rules", "rule", "verify", "run", "server", "help")


def test_help_shows_both_usages_every_command_and_the_lint_options():
    out, err = text(run_leaklint("--help"))
    lines = out.splitlines()
    assert lines[0] == "Usage: leaklint [OPTIONS] [PATHS]... | leaklint COMMAND [ARGS]..."
    commands = lines[lines.index("Commands:") + 1 : lines.index("Options:") - 1]
    assert [line.split()[0] for line in commands] == list(COMMANDS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in commands), "every command has its one-line description"
    assert "--select CODES" in out and "--stdin-filename NAME" in out and "Exit status: 0 no findings" in out
    assert err == ""
    assert text(run_leaklint("-h"))[0] == out
    assert text(run_leaklint("help"))[0].rstrip("\n") == out.rstrip("\n")


@pytest.mark.parametrize("command", ["verify", "rules", "rule", "check"])
def test_help_command_shows_a_commands_own_help(command):
    result = run_leaklint("help", command)
    assert result.returncode == 0
    assert text(result)[0].rstrip("\n") == text(run_leaklint(command, "--help"))[0].rstrip("\n")
    assert text(result)[0].startswith(f"Usage: leaklint {command} ")


def test_help_for_a_command_that_does_not_exist():
    result = run_leaklint("help", "verfy")
    assert result.returncode == 2
    assert text(result)[1] == (
        "leaklint: error: no command 'verfy' (did you mean 'verify'?); the commands are check, rules, rule, verify, run, server, help\n"
    )


@pytest.mark.parametrize(
    ("word", "suggestion"), [("verfy", "'verify'"), ("rulez", "'rule' or 'rules'"), ("chek", "'check'"), ("hepl", "'help'")]
)
def test_a_misspelt_command_is_not_taken_for_a_missing_file(project, word, suggestion):
    result = run_leaklint(word, cwd=project)
    assert result.returncode == 2 and result.stdout == b""
    assert text(result)[1] == f"leaklint: error: {word}: no such file or directory; did you mean the command {suggestion}?\n"


def test_a_word_close_to_a_command_that_exists_as_a_path_is_linted(project):
    (project / "verfy").mkdir()
    (project / "verfy" / "train.py").write_text(LEAKY_LOOP)
    result = run_leaklint("verfy", cwd=project)
    assert result.returncode == 1
    assert text(result)[0].startswith("verfy/train.py:10:9: LL101")


def test_a_missing_path_that_is_no_command_typo_is_a_plain_file_error(project):
    result = run_leaklint("train.py", cwd=project)
    assert result.returncode == 2
    assert text(result)[1] == "train.py: error: no such file or directory\n"


def test_a_directory_named_help_is_lintable_as_a_path(project):
    (project / "help").mkdir()
    (project / "help" / "train.py").write_text(LEAKY_LOOP)
    assert text(run_leaklint("help", cwd=project))[0].startswith("Usage: leaklint ")
    assert text(run_leaklint("./help", cwd=project))[0].startswith("help/train.py:10:9: LL101")


def test_text_findings_show_their_confidence(project):
    (project / "guess.py").write_text("total = 0\nfor batch in loader:\n    loss = compute(batch)\n    total += loss\n")
    out, _ = text(run_leaklint("--min-confidence", "low", "-q", "guess.py", cwd=project))
    assert out.startswith("guess.py:4:5: LL101 [leak, low confidence] ")
