"""A run's settings are one typed object (``run/request/settings.py``) that owns what is kept:
both faces are held to it — every ``run_eval`` keyword and every option of the local
CLI forms is a setting by name (or declared not to be one) — and no secret is ever
kept."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from osmosis_cli.commands.eval.local.run import RunOptions
from osmosis_cli.commands.eval.local.seed import SeedOptions
from osmosis_client.errors import InvalidInputError
from osmosis_local_runner.api.keywords import RunKeywords, SettingsKeywords, settings_of
from osmosis_local_runner.run.request.row_lists import rows_text
from osmosis_local_runner.run.request.settings import FATE, KEPT, SECRET, RunSettings

NAMES = {f.name for f in dataclasses.fields(RunSettings)}


def test_run_evals_keywords_are_the_settings_by_name() -> None:
    assert set(SettingsKeywords.__annotations__) == NAMES
    assert set(RunKeywords.__annotations__) >= NAMES  # and where the run goes, what runs


@pytest.mark.parametrize("form", [RunOptions, SeedOptions])
def test_every_cli_option_is_a_setting_or_declared_not_one(form: Any) -> None:
    options = {f.name for f in dataclasses.fields(form)}
    unaccounted = options - NAMES - set(form.RENAMED) - form.PRESENTATION
    assert unaccounted == set(), f"{form.__name__}: neither a setting nor presentation"
    assert set(form.RENAMED.values()) <= NAMES
    assert not (set(form.RENAMED) | form.PRESENTATION) & NAMES  # a name has one meaning


def test_every_setting_has_a_cli_option_in_some_form() -> None:
    faces = set()
    for form in (RunOptions, SeedOptions):
        options = {f.name for f in dataclasses.fields(form)}
        faces |= (options & NAMES) | {form.RENAMED[o] for o in options if o in form.RENAMED}
    assert faces == NAMES


def test_the_cli_and_the_library_make_the_same_settings() -> None:
    opts = RunOptions(
        config_path=Path("x.toml"),
        model="m",
        limit=3,
        rows_spec="1-3",
        max_in_flight=4,
        header=["X-Key: v"],
        sampling_args_json='{"top_p": 0.5}',
        no_transcripts=True,
        temperature=0.2,
    )
    library = settings_of(
        {
            "model": "m",
            "limit": 3,
            "rows": "1-3",
            "batch_size": 4,
            "headers": {"X-Key": "v"},
            "sampling_args": {"top_p": 0.5},
            "transcripts": False,
            "temperature": 0.2,
        }
    )
    assert opts.run_settings() == library


def test_secrets_are_never_kept_and_their_names_are() -> None:
    settings = RunSettings(
        model="m",
        api_key="sk-1",
        baseline_api_key="sk-2",
        headers=["Authorization: Bearer sk-3", "X-Trace: t"],
        base_url="https://user:sk-4@gw.example/v1",
        deadline=5.0,
    )
    kept = settings.kept()
    assert "sk-" not in repr(kept)
    assert sorted(kept["withheld"]) == [
        "api_key",
        "base_url",
        "baseline_api_key",
        "headers:Authorization",
        "headers:X-Trace",
    ]
    assert "deadline" not in kept and kept["model"] == "m"
    assert {name for name, fate in FATE.items() if fate == SECRET} == {
        "api_key",
        "baseline_api_key",
    }


def test_a_withheld_secret_is_asked_for_again() -> None:
    saved = RunSettings(api_key="sk", headers=["X-Key: v"]).kept()
    with pytest.raises(InvalidInputError) as refused:
        RunSettings().adopt(saved)
    assert refused.value.code == "RESUME_MISMATCH"
    assert refused.value.data["withheld"] == ["api_key", "headers:X-Key"]
    RunSettings(api_key="other", headers=["X-Key: w"]).adopt(saved)  # given again: fine


_VALUES: dict[str, Any] = {
    str: st.text(alphabet="abcxyz/-.0123456789", min_size=1, max_size=12),
    int: st.integers(min_value=0, max_value=10_000),
    float: st.floats(min_value=0, max_value=100, allow_nan=False),
    bool: st.booleans(),
    Path: st.builds(Path, st.text(alphabet="abc/", min_size=1, max_size=8)),
}


def _strategy(name: str, hint: Any) -> Any:
    if name == "rows":
        return st.frozensets(st.integers(0, 50), min_size=1, max_size=8)
    if name == "headers":
        return st.just([])
    if name == "sampling_args":
        return st.dictionaries(st.sampled_from(["top_p", "seed"]), st.integers(0, 9), max_size=2)
    if name == "series":  # a name (checked when given)
        return st.from_regex(r"[a-z0-9][a-z0-9._-]{0,11}", fullmatch=True)
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return _VALUES[args[0]]


_HINTS = typing.get_type_hints(RunSettings)
_KEPT = sorted(name for name, fate in FATE.items() if fate == KEPT and name != "headers")


@given(st.fixed_dictionaries({}, optional={n: _strategy(n, _HINTS[n]) for n in _KEPT}))
def test_what_is_kept_is_adopted_back_exactly(values: dict[str, Any]) -> None:
    original = RunSettings(**values)
    kept = original.kept()
    if any(isinstance(v, str) and "@" in v for v in values.values()):
        return  # a URL-looking value may be withheld; covered above
    resumed = RunSettings()
    resumed.adopt(kept)
    assert resumed == original


def test_a_finished_runs_fingerprint_judges_the_settings_given() -> None:
    recorded = {"model": "a", "limit": 3, "n": 2, "rows": "1-3", "sampling": {"temperature": 0.5}}
    assert RunSettings(model="a", limit=3).changes_from(recorded) == []
    assert RunSettings(rows=frozenset({1, 2, 3}), temperature=0.5).changes_from(recorded) == []
    assert RunSettings(batch_size=64).changes_from(recorded) == []  # pace: not what it is
    assert RunSettings(model="b", n=4, temperature=0.9).changes_from(recorded) == [
        "model: 'a' → 'b'",
        "n: 2 → 4",
        "sampling temperature: 0.5 → 0.9",
    ]
    assert rows_text({3, 1, 2, 7}) == "1-3,7"
