"""Repository state and pinning, on real repos in tmp_path with a bare remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from osmosis_client.errors import InvalidInputError
from osmosis_client.platform.git import inspect_repo, plan_pin, repo_path_from_url
from tests.gitrepo import git, make_project


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://github.com/Org/Repo.git", "org/repo"),
        ("https://user:secret@github.com:443/Org/Repo", "org/repo"),
        ("ssh://git@gitlab.example.com:2222/group/sub/repo.git", "group/sub/repo"),
        ("git@github.com:Org/Repo.git", "org/repo"),
        ("git@bitbucket.org:team/proj/", "team/proj"),
        ("https://gitlab.com/a/b/c", "a/b/c"),
        ("/srv/git/repo.git", None),
        ("file:///srv/git/x/y.git", None),
        ("", None),
    ],
)
def test_origin_repo_path(url: str, expected: str | None) -> None:
    assert repo_path_from_url(url) == expected


def pin(project: Path, **kw: object):  # type: ignore[no-untyped-def]
    state = inspect_repo(project)
    opts = {"commit_sha": None, "branch": None, **kw}
    return state, plan_pin(state, **opts)  # type: ignore[arg-type]


def test_pushed_clean_head_is_pinned(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    state, result = pin(project)
    assert result.commit_sha == git(project, "rev-parse", "HEAD")
    assert len(result.commit_sha or "") == 40
    assert (result.unpushed, result.dirty_files) == (False, ())
    assert state.origin_repo == "org/demo"
    assert state.branch == "main"


def test_unpushed_head_is_reported_not_refused(tmp_path: Path) -> None:
    project = make_project(tmp_path, push=False)
    _, result = pin(project)
    assert result.unpushed
    assert result.commit_sha == git(project, "rev-parse", "HEAD")


def test_new_local_commit_is_unpushed(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "rollouts" / "demo" / "main.py").write_text("# changed\n")
    git(project, "commit", "-qam", "local only")
    assert pin(project)[1].unpushed


def test_dirty_files_are_reported(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "rollouts" / "demo" / "main.py").write_text("# edited\n")
    _, result = pin(project)
    assert result.dirty_files == ("rollouts/demo/main.py",)
    assert not result.unpushed


def test_untracked_files_count_only_under_rollouts(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "notes.txt").write_text("scratch")
    assert inspect_repo(project).untracked_files == []
    (project / "rollouts" / "demo" / "helper.py").write_text("x = 1\n")
    state = inspect_repo(project)
    assert (state.untracked_files, state.dirty_files) == (["rollouts/demo/helper.py"], [])


def test_only_tracked_changes_of_the_submitted_rollout_are_dirty(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "rollouts" / "other").mkdir()
    (project / "rollouts" / "other" / "x.py").write_text("x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "other")
    (project / "rollouts" / "other" / "x.py").write_text("x = 2\n")  # another rollout
    (project / "rollouts" / "demo" / "uv.lock").write_text("# a tool left this\n")
    _, result = pin(project, rollout="rollouts/demo")
    assert result.dirty_files == ()
    assert set(result.other_changes) == {"rollouts/other/x.py", "rollouts/demo/uv.lock"}
    (project / "rollouts" / "demo" / "main.py").write_text("# edited\n")
    assert pin(project, rollout="rollouts/demo")[1].dirty_files == ("rollouts/demo/main.py",)


def test_detached_head_supported(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    git(project, "checkout", "-q", "--detach", "HEAD")
    state, result = pin(project)
    assert state.detached
    assert result.commit_sha == state.head_sha


def test_pinned_commit_must_exist_and_is_expanded(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    head = git(project, "rev-parse", "HEAD")
    _, result = pin(project, commit_sha=head[:8])
    assert result.commit_sha == head
    with pytest.raises(InvalidInputError) as info:
        pin(project, commit_sha="deadbeef")
    assert info.value.code == "UNKNOWN_COMMIT"


def test_branch_pin_sends_branch(tmp_path: Path) -> None:
    project = make_project(tmp_path, push=False)
    _, result = pin(project, branch="release")
    assert (result.commit_sha, result.branch) == (None, "release")


def test_no_origin_and_non_github_origin(tmp_path: Path) -> None:
    none = make_project(tmp_path / "a", origin=None)
    assert inspect_repo(none).origin_repo is None
    other = make_project(tmp_path / "b", origin="https://gitlab.example.com/grp/sub/proj.git")
    assert inspect_repo(other).origin_repo == "grp/sub/proj"


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as info:
        inspect_repo(tmp_path)
    assert info.value.code == "NOT_A_REPO"
