"""Configuration: where it is found, what each key means, and how bad values are reported."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from leaklint.config import (
    DEFAULT_EXCLUDES,
    ConfigError,
    Settings,
    find_config_file,
    load_settings,
    matches_selector,
    parse_selectors,
)
from leaklint.findings import Applicability, Confidence, Severity
from leaklint.rule import Rule

# --- fake rules: the real ones are not needed to test selection ----------------------------------


class _FakeRule(Rule):
    severity = Severity.LEAK
    summary = help = docs = "fake"


class LL101(_FakeRule):
    code, name = "LL101", "first-leak"


class LL102(_FakeRule):
    code, name = "LL102", "second-leak"


class LL201(_FakeRule):
    code, name = "LL201", "peak"


class LL401(_FakeRule):
    code, name = "LL401", "opt-in"
    default_enabled = False


RULES: dict[str, type[Rule]] = {rule.code: rule for rule in (LL101, LL102, LL201, LL401)}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def settings_from(tmp_path: Path, body: str) -> Settings:
    """Settings from a pyproject.toml whose [tool.leaklint] table is ``body``."""
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\n" + textwrap.dedent(body))
    return load_settings(cwd=tmp_path)


def config_error(tmp_path: Path, body: str) -> str:
    with pytest.raises(ConfigError) as info:
        settings_from(tmp_path, body)
    return str(info.value)


# --- finding the file ----------------------------------------------------------------------------


def test_no_config_file_gives_defaults_rooted_at_cwd(tmp_path: Path) -> None:
    settings = load_settings(cwd=tmp_path)
    assert settings == Settings(root=tmp_path)
    assert settings.config_path is None


def test_cwd_defaults_to_the_process_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\nignore = ['LL2']\n")
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.ignore == ("LL2",)
    assert settings.root == tmp_path


def test_search_goes_upward_from_cwd(tmp_path: Path) -> None:
    config = write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    assert find_config_file(tmp_path / "src" / "pkg") == config


def test_the_nearest_config_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    inner = write(tmp_path / "sub" / "pyproject.toml", "[tool.leaklint]\n")
    assert find_config_file(tmp_path / "sub") == inner


def test_a_pyproject_without_the_table_is_skipped(tmp_path: Path) -> None:
    outer = write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    write(tmp_path / "sub" / "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_config_file(tmp_path / "sub") == outer


def test_a_pyproject_that_only_mentions_leaklint_elsewhere_is_skipped(tmp_path: Path) -> None:
    outer = write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    write(tmp_path / "sub" / "pyproject.toml", "[project]\ndependencies = ['leaklint']\n")
    assert find_config_file(tmp_path / "sub") == outer


def test_a_broken_pyproject_on_the_way_up_is_an_error(tmp_path: Path) -> None:
    """It may hold leaklint's table (in UTF-16, or after the error): the run does not guess."""
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    write(tmp_path / "sub" / "pyproject.toml", "[project\n")
    with pytest.raises(ConfigError, match=r"^pyproject.toml: invalid TOML: "):
        find_config_file(tmp_path / "sub")


@pytest.mark.parametrize("table", ["[leaklint]", "[tools.leaklint]", "[tool.leak-lint]", "[tool.LeakLint]"])
def test_leaklints_table_under_another_name_is_an_error(tmp_path: Path, table: str) -> None:
    write(tmp_path / "pyproject.toml", f"{table}\nselect = ['LL1']\n")
    with pytest.raises(ConfigError, match=rf"^pyproject.toml: \[{re.escape(table[1:-1])}\] is not read: leaklint's settings go in \[tool.leaklint\]$"):
        load_settings(cwd=tmp_path)


def test_the_search_may_start_from_a_file(tmp_path: Path) -> None:
    config = write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    script = write(tmp_path / "train.py", "")
    assert find_config_file(script) == config


def test_nothing_found_returns_none(tmp_path: Path) -> None:
    assert find_config_file(tmp_path) is None


def test_a_leaklint_toml_beats_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\nignore = ['LL1']\n")
    dedicated = write(tmp_path / "leaklint.toml", "ignore = ['LL2']\n")
    assert find_config_file(tmp_path) == dedicated
    assert load_settings(cwd=tmp_path).ignore == ("LL2",)


def test_a_dot_leaklint_toml_is_found_too(tmp_path: Path) -> None:
    dedicated = write(tmp_path / ".leaklint.toml", "min-confidence = 'high'\n")
    assert find_config_file(tmp_path) == dedicated
    assert load_settings(cwd=tmp_path).min_confidence is Confidence.HIGH


def test_a_nearer_pyproject_beats_a_leaklint_toml_further_up(tmp_path: Path) -> None:
    write(tmp_path / "leaklint.toml", "")
    inner = write(tmp_path / "sub" / "pyproject.toml", "[tool.leaklint]\n")
    assert find_config_file(tmp_path / "sub") == inner


# --- --config ------------------------------------------------------------------------------------


def test_an_explicit_config_file_wins_over_the_search(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\nignore = ['LL1']\n")
    explicit = write(tmp_path / "ci" / "strict.toml", "select = ['ALL']\n")
    settings = load_settings(explicit, cwd=tmp_path)
    assert settings.select == ("ALL",)
    assert settings.ignore == ()
    assert settings.config_path == explicit
    assert settings.root == tmp_path / "ci"


def test_an_explicit_config_path_is_relative_to_cwd(tmp_path: Path) -> None:
    write(tmp_path / "ci" / "strict.toml", "ignore = 'LL2'\n")
    assert load_settings(Path("ci/strict.toml"), cwd=tmp_path).ignore == ("LL2",)


def test_an_explicit_file_with_the_table_uses_the_table(tmp_path: Path) -> None:
    explicit = write(tmp_path / "other.toml", "[tool.leaklint]\nignore = ['LL2']\n")
    assert load_settings(explicit, cwd=tmp_path).ignore == ("LL2",)


def test_an_explicit_pyproject_without_the_table_gives_defaults_rooted_there(
    tmp_path: Path,
) -> None:
    explicit = write(tmp_path / "proj" / "pyproject.toml", "[project]\nname = 'x'\n")
    settings = load_settings(explicit, cwd=tmp_path)
    assert settings == Settings(root=tmp_path / "proj", config_path=explicit)


def test_an_explicit_config_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing.toml: config file not found"):
        load_settings(Path("missing.toml"), cwd=tmp_path)


def test_an_explicit_config_must_be_a_file(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    with pytest.raises(ConfigError, match="not a file"):
        load_settings(Path("adir"), cwd=tmp_path)


def test_root_is_the_config_directory_even_from_a_subdirectory(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\n")
    (tmp_path / "src").mkdir()
    assert load_settings(cwd=tmp_path / "src").root == tmp_path


# --- each key ------------------------------------------------------------------------------------


def test_an_empty_table_gives_the_defaults(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "")
    assert settings == Settings(root=tmp_path, config_path=tmp_path / "pyproject.toml")
    assert settings.exclude == DEFAULT_EXCLUDES
    assert settings.min_confidence is Confidence.MEDIUM
    assert settings.respect_gitignore is True


def test_select_takes_a_list(tmp_path: Path) -> None:
    assert settings_from(tmp_path, "select = ['LL1', 'll201']").select == ("LL1", "LL201")


def test_select_takes_a_comma_separated_string(tmp_path: Path) -> None:
    assert settings_from(tmp_path, "select = 'LL1, LL201'").select == ("LL1", "LL201")


def test_extend_select_and_ignore_are_read(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "extend-select = ['LL401']\nignore = ['LL102']")
    assert settings.extend_select == ("LL401",)
    assert settings.ignore == ("LL102",)


def test_exclude_replaces_the_default_excludes(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "exclude = ['generated']")
    assert settings.exclude == ("generated",)
    assert not settings.is_excluded(tmp_path / "build" / "a.py")
    assert settings.is_excluded(tmp_path / "generated" / "a.py")


def test_extend_exclude_keeps_the_default_excludes(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "extend-exclude = ['generated']")
    assert settings.exclude == DEFAULT_EXCLUDES
    assert settings.extend_exclude == ("generated",)
    assert settings.is_excluded(tmp_path / "build" / "a.py")
    assert settings.is_excluded(tmp_path / "generated" / "a.py")


def test_per_file_ignores_is_a_table_of_globs_to_codes(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path,
        """
        [tool.leaklint.per-file-ignores]
        "tests/**" = ["LL101", "ll2"]
        "conftest.py" = "LL102"
        """,
    )
    assert settings.per_file_ignores == (
        ("tests/**", ("LL101", "LL2")),
        ("conftest.py", ("LL102",)),
    )


@pytest.mark.parametrize("value", ["low", "medium", "high", "HIGH"])
def test_min_confidence_takes_a_level_name(tmp_path: Path, value: str) -> None:
    assert settings_from(tmp_path, f"min-confidence = '{value}'").min_confidence == Confidence(
        value.lower()
    )


def test_respect_gitignore_takes_a_bool(tmp_path: Path) -> None:
    assert settings_from(tmp_path, "respect-gitignore = false").respect_gitignore is False


def test_max_file_size_takes_bytes_or_a_size_with_a_unit(tmp_path: Path) -> None:
    assert settings_from(tmp_path, "max-file-size = 1000").max_file_size == 1000
    assert settings_from(tmp_path, 'max-file-size = "2 MiB"').max_file_size == 2 * 1024 * 1024
    assert settings_from(tmp_path, 'max-file-size = "500KB"').max_file_size == 500_000


def test_fix_keys_decide_which_fixes_apply_and_how(tmp_path: Path) -> None:
    settings = settings_from(
        tmp_path,
        'unfixable = ["LL2"]\nextend-safe-fixes = ["LL103"]\nextend-unsafe-fixes = ["LL102"]',
    )
    safe, unsafe, display = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY
    assert settings.fix_applicability("LL101", safe) is safe
    assert settings.fix_applicability("LL201", unsafe) is None
    assert settings.fix_applicability("LL103", unsafe) is safe
    assert settings.fix_applicability("LL102", safe) is unsafe
    assert settings.fix_applicability("LL404", display) is display
    only = settings_from(tmp_path, 'fixable = ["LL101"]')
    assert only.fix_applicability("LL101", safe) is safe
    assert only.fix_applicability("LL102", safe) is None


def test_a_bad_max_file_size_names_the_key(tmp_path: Path) -> None:
    message = config_error(tmp_path, 'max-file-size = "big"')
    assert "max-file-size: expected a positive size" in message


# --- bad configuration ---------------------------------------------------------------------------


def test_an_unknown_key_is_an_error_with_a_suggestion(tmp_path: Path) -> None:
    message = config_error(tmp_path, "min_confidence = 'high'")
    assert message.startswith("pyproject.toml: [tool.leaklint] unknown key 'min_confidence'")
    assert "did you mean 'min-confidence'?" in message
    assert "exclude, extend-exclude, extend-safe-fixes, extend-select, extend-unsafe-fixes, fixable, ignore" in message


def test_an_unknown_key_with_no_close_match_lists_the_valid_keys(tmp_path: Path) -> None:
    message = config_error(tmp_path, "colour = true")
    assert "unknown key 'colour'" in message
    assert "did you mean" not in message
    assert "respect-gitignore" in message


def test_an_unknown_key_in_a_leaklint_toml_names_that_file(tmp_path: Path) -> None:
    write(tmp_path / "leaklint.toml", "selct = ['LL1']\n")
    with pytest.raises(
        ConfigError, match=r"^leaklint.toml: unknown key 'selct' \(did you mean 'select'\?\)"
    ):
        load_settings(cwd=tmp_path)


def test_a_bad_min_confidence_names_file_key_and_choices(tmp_path: Path) -> None:
    message = config_error(tmp_path, "min-confidence = 'extreme'")
    assert message == (
        "pyproject.toml: [tool.leaklint] min-confidence: "
        "expected one of low, medium, high, got 'extreme'"
    )


def test_a_non_string_min_confidence_is_an_error(tmp_path: Path) -> None:
    assert "min-confidence: expected one of" in config_error(tmp_path, "min-confidence = 2")


@pytest.mark.parametrize("key", ["select", "extend-select", "ignore"])
def test_a_selector_key_rejects_a_number(tmp_path: Path, key: str) -> None:
    message = config_error(tmp_path, f"{key} = 5")
    assert f"[tool.leaklint] {key}: expected a string or a list of strings, got int 5" in message


@pytest.mark.parametrize("key", ["select", "extend-select", "ignore"])
def test_a_selector_key_rejects_a_malformed_selector(tmp_path: Path, key: str) -> None:
    message = config_error(tmp_path, f"{key} = ['LL1x']")
    assert f"[tool.leaklint] {key}: invalid selector 'LL1x'" in message


def test_a_selector_list_rejects_non_string_items(tmp_path: Path) -> None:
    assert "select: expected a string or a list of strings, got int 101" in config_error(
        tmp_path, "select = ['LL1', 101]"
    )


@pytest.mark.parametrize("key", ["exclude", "extend-exclude"])
def test_an_exclude_key_rejects_a_single_string(tmp_path: Path, key: str) -> None:
    message = config_error(tmp_path, f"{key} = 'build'")
    assert f"{key}: expected a list of glob patterns, got str 'build'" in message


@pytest.mark.parametrize("key", ["exclude", "extend-exclude"])
def test_an_exclude_key_rejects_non_string_items(tmp_path: Path, key: str) -> None:
    assert f"{key}: expected a list of glob patterns" in config_error(tmp_path, f"{key} = ['a', 1]")


def test_per_file_ignores_must_be_a_table(tmp_path: Path) -> None:
    assert "per-file-ignores: expected a table" in config_error(
        tmp_path, "per-file-ignores = ['tests/**']"
    )


def test_per_file_ignores_rejects_bad_codes_and_names_the_glob(tmp_path: Path) -> None:
    message = config_error(tmp_path, "per-file-ignores = { 'tests/**' = ['LL1x'] }")
    assert "per-file-ignores 'tests/**': invalid selector 'LL1x'" in message


def test_respect_gitignore_rejects_a_string(tmp_path: Path) -> None:
    assert "respect-gitignore: expected true or false, got str 'no'" in config_error(
        tmp_path, "respect-gitignore = 'no'"
    )


def test_a_non_table_tool_leaklint_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool]\nleaklint = 3\n")
    with pytest.raises(ConfigError, match=r"\[tool.leaklint\] must be a table"):
        load_settings(Path("pyproject.toml"), cwd=tmp_path)


def test_invalid_toml_names_the_file_and_the_parser_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint]\nselect = ]\n")
    with pytest.raises(ConfigError, match=r"^pyproject.toml: invalid TOML: .*line 2"):
        load_settings(cwd=tmp_path)


def test_invalid_toml_in_an_explicit_config_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "strict.toml", "select = \n")
    with pytest.raises(ConfigError, match="strict.toml: invalid TOML"):
        load_settings(Path("strict.toml"), cwd=tmp_path)


def test_an_unreadable_config_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path / "strict.toml", "")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", refuse)
    with pytest.raises(
        ConfigError, match="strict.toml: cannot read config file: Permission denied"
    ):
        load_settings(config, cwd=tmp_path)


# --- selectors -----------------------------------------------------------------------------------


def test_parse_selectors_splits_uppercases_and_dedupes() -> None:
    assert parse_selectors("ll1, LL201  LL1", key="select") == ("LL1", "LL201")
    assert parse_selectors(["LL1,LL2", "ll3"], key="select") == ("LL1", "LL2", "LL3")
    assert parse_selectors("", key="select") == ()


def test_parse_selectors_accepts_all_and_bare_prefixes() -> None:
    assert parse_selectors(["all", "LL"], key="select") == ("ALL", "LL")


def test_parse_selectors_error_names_the_key() -> None:
    with pytest.raises(ConfigError, match="^--ignore: invalid selector 'LL-1'"):
        parse_selectors("LL-1", key="--ignore")


@pytest.mark.parametrize(
    ("code", "selector", "expected"),
    [
        ("LL101", "ALL", True),
        ("LL101", "LL101", True),
        ("LL101", "LL1", True),
        ("LL101", "LL", True),
        ("LL101", "LL2", False),
        ("LL101", "LL1011", False),
        ("LL101", "ll1", True),
    ],
)
def test_matches_selector(code: str, selector: str, expected: bool) -> None:
    assert matches_selector(code, selector) is expected


# --- selection semantics -------------------------------------------------------------------------


def test_by_default_the_default_enabled_rules_run() -> None:
    assert Settings().enabled_codes(RULES) == {"LL101", "LL102", "LL201"}


def test_select_all_enables_default_off_rules_too() -> None:
    assert Settings(select=("ALL",)).enabled_codes(RULES) == set(RULES)


def test_select_by_prefix_enables_only_matching_rules() -> None:
    assert Settings(select=("LL1",)).enabled_codes(RULES) == {"LL101", "LL102"}


def test_select_by_exact_code() -> None:
    assert Settings(select=("LL201",)).enabled_codes(RULES) == {"LL201"}


def test_an_empty_select_enables_nothing() -> None:
    assert Settings(select=()).enabled_codes(RULES) == frozenset()


def test_extend_select_turns_on_a_default_off_rule() -> None:
    assert Settings(extend_select=("LL401",)).enabled_codes(RULES) == {
        "LL101",
        "LL102",
        "LL201",
        "LL401",
    }


def test_extend_select_adds_to_an_explicit_select() -> None:
    assert Settings(select=("LL2",), extend_select=("LL101",)).enabled_codes(RULES) == {
        "LL101",
        "LL201",
    }


def test_ignore_wins_over_select_and_extend_select() -> None:
    settings = Settings(select=("ALL",), extend_select=("LL101",), ignore=("LL1", "LL401"))
    assert settings.enabled_codes(RULES) == {"LL201"}


def test_selectors_matching_no_known_rule_are_harmless() -> None:
    settings = Settings(select=("XYZ", "LL9"), extend_select=("PLUGIN1",), ignore=("E501",))
    assert settings.enabled_codes(RULES) == frozenset()
    assert Settings(ignore=("NOPE",)).enabled_codes({}) == frozenset()


def test_selection_from_a_config_file(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "extend-select = ['LL4']\nignore = ['LL102']")
    assert settings.enabled_codes(RULES) == {"LL101", "LL201", "LL401"}


# --- per-file-ignores ----------------------------------------------------------------------------


def test_a_pattern_without_slash_matches_the_basename_anywhere(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, per_file_ignores=(("conftest.py", ("LL101",)),))
    assert settings.ignored_codes_for(tmp_path / "conftest.py") == ("LL101",)
    assert settings.ignored_codes_for(tmp_path / "tests" / "unit" / "conftest.py") == ("LL101",)
    assert settings.ignored_codes_for(tmp_path / "tests" / "test_a.py") == ()


def test_a_dir_double_star_pattern_matches_everything_below(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, per_file_ignores=(("tests/**", ("LL1",)),))
    assert settings.ignored_codes_for(tmp_path / "tests" / "a.py") == ("LL1",)
    assert settings.ignored_codes_for(tmp_path / "tests" / "deep" / "b.py") == ("LL1",)
    assert settings.ignored_codes_for(tmp_path / "src" / "tests.py") == ()


def test_a_leading_double_star_matches_at_any_depth_including_the_root(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, per_file_ignores=(("**/scripts/*.py", ("LL2",)),))
    assert settings.ignored_codes_for(tmp_path / "scripts" / "run.py") == ("LL2",)
    assert settings.ignored_codes_for(tmp_path / "a" / "scripts" / "run.py") == ("LL2",)


def test_a_pattern_with_slash_is_relative_to_the_root(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, per_file_ignores=(("scripts/*.py", ("LL2",)),))
    assert settings.ignored_codes_for(tmp_path / "scripts" / "run.py") == ("LL2",)
    assert settings.ignored_codes_for(tmp_path / "src" / "scripts" / "run.py") == ()


def test_every_matching_pattern_contributes_its_codes(tmp_path: Path) -> None:
    settings = Settings(
        root=tmp_path,
        per_file_ignores=(("tests/**", ("LL101",)), ("conftest.py", ("LL102", "LL101"))),
    )
    assert settings.ignored_codes_for(tmp_path / "tests" / "conftest.py") == ("LL101", "LL102")


def test_per_file_ignores_are_relative_to_the_config_dir_when_cwd_is_a_subdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.leaklint.per-file-ignores]\n'tests/**' = ['LL101']\n")
    (tmp_path / "tests").mkdir()
    monkeypatch.chdir(tmp_path / "tests")
    settings = load_settings()
    assert settings.ignored_codes_for("test_train.py") == ("LL101",)
    assert settings.ignored_codes_for(tmp_path / "src" / "train.py") == ()


def test_relative_paths_are_resolved_against_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings(root=tmp_path, per_file_ignores=(("tests/**", ("LL1",)),))
    assert settings.ignored_codes_for("tests/a.py") == ("LL1",)
    assert settings.ignored_codes_for("./tests/a.py") == ("LL1",)


def test_a_path_outside_the_root_is_matched_as_given(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path / "proj", per_file_ignores=(("conftest.py", ("LL1",)),))
    assert settings.ignored_codes_for(tmp_path / "elsewhere" / "conftest.py") == ("LL1",)


# --- exclude -------------------------------------------------------------------------------------


def test_default_excludes_match_any_path_component(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path)
    assert settings.is_excluded(tmp_path / ".venv" / "lib" / "x.py")
    assert settings.is_excluded(tmp_path / "pkg" / "__pycache__")
    assert settings.is_excluded(tmp_path / "src" / "build")
    assert not settings.is_excluded(tmp_path / "src" / "builder.py")
    assert not settings.is_excluded(tmp_path / "src" / "train.py")


def test_a_pattern_without_slash_may_be_a_glob_on_a_component(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, exclude=("*.egg-info",))
    assert settings.is_excluded(tmp_path / "leaklint.egg-info" / "PKG-INFO")
    assert not settings.is_excluded(tmp_path / "src" / "a.py")


def test_a_pattern_with_slash_matches_the_root_relative_path_and_below(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, exclude=("src/gen",))
    assert settings.is_excluded(tmp_path / "src" / "gen")
    assert settings.is_excluded(tmp_path / "src" / "gen" / "a.py")
    assert not settings.is_excluded(tmp_path / "other" / "src" / "gen" / "a.py")
    assert not settings.is_excluded(tmp_path / "src" / "generate.py")


def test_exclude_patterns_may_use_double_star(tmp_path: Path) -> None:
    settings = Settings(root=tmp_path, exclude=("**/migrations/*.py", "legacy/**"))
    assert settings.is_excluded(tmp_path / "app" / "migrations" / "0001.py")
    assert settings.is_excluded(tmp_path / "migrations" / "0001.py")
    assert settings.is_excluded(tmp_path / "legacy")
    assert settings.is_excluded(tmp_path / "legacy" / "old" / "a.py")
    assert not settings.is_excluded(tmp_path / "app" / "models.py")


def test_the_root_itself_is_never_excluded_by_its_own_name(tmp_path: Path) -> None:
    root = tmp_path / "build"
    assert not Settings(root=root).is_excluded(root / "train.py")


def test_exclude_accepts_paths_relative_to_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    settings = Settings(root=tmp_path, exclude=("src/gen",))
    assert settings.is_excluded("gen/a.py")
    assert not settings.is_excluded("train.py")


def test_root_relative_paths_agree_with_pathlib_through_symlinks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On POSIX ``_relative_posix`` works on strings; ``_relative_posix_pathlib`` (used off POSIX
    and for ``//`` paths) is the plain pathlib form it must agree with."""
    from leaklint.config import _relative_posix, _relative_posix_pathlib

    real = tmp_path / "real"
    (real / "pkg" / "sub").mkdir(parents=True)
    (real / "pkg" / "a.py").write_text("")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "b.py").write_text("")
    (tmp_path / "root_link").symlink_to(real, target_is_directory=True)
    (real / "pkg" / "to_outside.py").symlink_to(tmp_path / "outside" / "b.py")
    (real / "pkg" / "dir_link").symlink_to(real / "pkg" / "sub", target_is_directory=True)
    (tmp_path / "outside" / "into_root.py").symlink_to(real / "pkg" / "a.py")
    monkeypatch.chdir(real / "pkg")
    paths = [
        real, real / "pkg" / "a.py", real / "pkg" / "missing.py", real / "pkg" / "dir_link" / "c.py",
        real / "pkg" / "to_outside.py", tmp_path / "root_link" / "pkg" / "a.py",
        tmp_path / "outside" / "b.py", tmp_path / "outside" / "into_root.py", tmp_path / "nowhere" / "x.py",
        "a.py", "./sub/../a.py", "sub/", "../pkg//a.py", ".", "..", "/", str(real) + "/",
    ]
    for root in (real, tmp_path / "root_link", Path("."), Path("/"), tmp_path / "outside"):
        for path in paths:
            assert _relative_posix(path, root) == _relative_posix_pathlib(path, root), (path, root)
    assert _relative_posix("//srv/a.py", Path("/")) == _relative_posix_pathlib("//srv/a.py", Path("/"))


def test_exclusion_agrees_with_matching_each_pattern_on_each_component(tmp_path: Path) -> None:
    """``is_excluded`` prepares its patterns once; the answer is the pattern-by-pattern one."""
    import fnmatch

    from leaklint.config import _clean_pattern, _path_or_parent_matches

    def one_by_one(relative: str) -> bool:
        for pattern in map(_clean_pattern, patterns):
            if "/" in pattern:
                if _path_or_parent_matches(relative, pattern):
                    return True
            elif any(fnmatch.fnmatchcase(part, pattern) for part in relative.split("/")):
                return True
        return False

    patterns = (*DEFAULT_EXCLUDES, "*.egg-info", "gen?", "[ab]uild", "src/gen", "**/migrations/*.py", "./legacy/")
    settings = Settings(root=tmp_path, exclude=patterns)
    names = ["build", "builder", "gen1", "gen", "a.egg-info", "src", "migrations", "legacy", ".venv", "venv", "auild", "x.py"]
    verdicts = set()
    for first in names:
        for second in names:
            verdict = settings.is_excluded(tmp_path / first / second)
            assert verdict == one_by_one(f"{first}/{second}"), (first, second)
            verdicts.add(verdict)
    assert verdicts == {True, False}
    assert not settings.is_excluded(tmp_path / "src" / "x.py") and settings.is_excluded(tmp_path / "src" / "gen" / "x.py")


# --- with_overrides ------------------------------------------------------------------------------


def test_with_overrides_replaces_fields_and_normalises_raw_cli_values(tmp_path: Path) -> None:
    base = Settings(root=tmp_path, ignore=("LL1",))
    settings = base.with_overrides(select=["LL1,ll2"], min_confidence="high", extend_exclude="gen")
    assert settings.select == ("LL1", "LL2")
    assert settings.min_confidence is Confidence.HIGH
    assert settings.extend_exclude == ("gen",)
    assert settings.ignore == ("LL1",)
    assert settings.root == tmp_path


def test_with_overrides_rejects_a_bad_selector_naming_the_option() -> None:
    with pytest.raises(ConfigError, match="^--extend-select: invalid selector 'LL1x'"):
        Settings().with_overrides(extend_select="LL1x")


def test_with_overrides_rejects_a_bad_confidence() -> None:
    with pytest.raises(ConfigError, match="^--min-confidence: expected one of low, medium, high"):
        Settings().with_overrides(min_confidence="extreme")


def test_with_overrides_accepts_select_none_to_restore_the_defaults() -> None:
    assert Settings(select=("ALL",)).with_overrides(select=None).select is None


def test_with_overrides_rejects_unknown_fields() -> None:
    with pytest.raises(TypeError, match="no field"):
        Settings().with_overrides(colour=True)


def test_settings_are_hashable_and_frozen() -> None:
    settings = Settings().with_overrides(per_file_ignores={"tests/**": ["LL1"]})
    assert settings.per_file_ignores == (("tests/**", ("LL1",)),)
    hash(settings)
    with pytest.raises(AttributeError):
        settings.select = ("ALL",)  # type: ignore[misc]


def test_a_relinked_root_is_seen_afresh_by_the_next_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Realpaths of directories are remembered within a run; a link pointed elsewhere since the
    last run must not leave a stale answer (here: whether a file lies under the root)."""
    from leaklint.config import _relative_posix
    from leaklint.discovery import discover

    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.py").write_text("")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "one", target_is_directory=True)
    assert _relative_posix(link / "a.py", tmp_path / "one") == "a.py"
    link.unlink()
    link.symlink_to(tmp_path / "two", target_is_directory=True)
    discover([str(tmp_path / "two")], Settings(root=tmp_path / "two"))
    assert _relative_posix(link / "a.py", tmp_path / "one") == (link / "a.py").as_posix()
    assert _relative_posix(link / "a.py", tmp_path / "two") == "a.py"
