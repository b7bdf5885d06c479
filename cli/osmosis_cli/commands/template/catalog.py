"""The rollout templates ``template apply`` writes into a workspace.

Bundled ones ship with the package (offline): the multiply rollouts on the OpenAI Agents
and Strands integrations and our own examples. A name we do not bundle (such as
``multiply-harbor-strands``, which needs Harbor sandboxes) comes, as the published CLI
takes every template, from the Osmosis workspace template: ``$OSMOSIS_WORKSPACE_TEMPLATE_PATH``
(a local checkout) or its GitHub archive (``_REPO``, ``_REF``; ``_URL`` names another).

A template is ``rollouts/NAME/**``, its configs and its data files. Without ``--force``
nothing existing is touched (a shared data file with the same bytes is fine); with it,
``rollouts/NAME/`` is replaced and the files overwritten. Nothing is written through a
symlink.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from osmosis_cli.bundled import example_root
from osmosis_client.errors import InvalidInputError, OsmosisError
from osmosis_client.workspace import inside

SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", ".osmosis", "*.egg-info")
REMOTE = ("multiply-harbor-strands",)  # published, not bundled: fetched when applied
DEFAULT_REPO = "Osmosis-AI/workspace-template"


@dataclass(frozen=True)
class Template:
    name: str
    description: str
    example: str  # the bundled example workspace that holds it ("" for a fetched one)
    rollout: str  # its folder under rollouts/
    files: tuple[str, ...]  # workspace-relative: configs, data

    def source(self) -> Path:
        return example_root() / self.example


BUNDLED = (
    Template(
        "multiply-local-openai",
        "OpenAI Agents agent with a multiply tool (osmosis-ai 0.3 rollout server)",
        "multiply",
        "multiply-local-openai",
        (
            "configs/eval/multiply-local-openai.toml",
            "configs/training/multiply-local-openai.toml",
            "data/multiply.jsonl",
        ),
    ),
    Template(
        "multiply-local-strands",
        "Strands agent with a multiply tool (osmosis-ai 0.3 rollout server)",
        "multiply",
        "multiply-local-strands",
        (
            "configs/eval/multiply-local-strands.toml",
            "configs/training/multiply-local-strands.toml",
            "data/multiply.jsonl",
        ),
    ),
    Template(
        "calculator",
        "in-process calculator rollout; runs offline on mock/flaky-calculator",
        "quickstart",
        "calculator",
        ("configs/eval/quickstart.toml", "data/arithmetic.jsonl"),
    ),
    Template(
        "calculator-server",
        "calculator rollout server (osmosis-ai 0.3), offline on mock/calculator",
        "published-rollout",
        "calculator",
        ("configs/eval/calculator.toml", "data/arithmetic.jsonl"),
    ),
    Template(
        "agents-calculator",
        "OpenAI Agents calculator with tools (osmosis-ai 0.3), offline on mock/tool-calculator",
        "published-rollout",
        "agents-calculator",
        ("configs/eval/agents-calculator.toml", "data/arithmetic.jsonl"),
    ),
)


def find(name: str) -> Template:
    for template in BUNDLED:
        if template.name == name:
            return template
    if name in REMOTE or os.environ.get("OSMOSIS_WORKSPACE_TEMPLATE_PATH"):
        return _remote(name)
    names = ", ".join([t.name for t in BUNDLED] + list(REMOTE))
    raise InvalidInputError(
        f"template {name!r} not found (available: {names})",
        hint="list them with `osmosis template list`",
        code="NOT_FOUND",
    )


@dataclass(frozen=True)
class Applied:
    name: str
    destinations: list[str]
    files: list[str]


def apply(template: Template, root: Path, *, force: bool) -> Applied:
    """Copy ``template`` into the workspace at ``root``."""
    source = template.source()
    rollout = f"rollouts/{template.rollout}"
    if not (source / rollout).is_dir():
        raise InvalidInputError(
            f"template {template.name!r} has no {rollout} in {source}", code="NOT_FOUND"
        )
    files = [f for f in template.files if (source / f).is_file()]
    _check(root, source, rollout, files, force=force)
    target = inside(root, rollout)
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source / rollout, target, ignore=SKIPPED)
    for name in files:
        dest = inside(root, name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / name, dest)
    written = sorted(
        [p.relative_to(root).as_posix() for p in target.rglob("*") if p.is_file()] + files
    )
    parents = sorted({str((root / f).parent.resolve()) for f in files})
    return Applied(template.name, [str(target.resolve()), *parents], written)


def _check(root: Path, source: Path, rollout: str, files: list[str], *, force: bool) -> None:
    target = inside(root, rollout)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InvalidInputError(f"{rollout} is not a folder", code="CONFLICT")
    conflicts = [f"{rollout}/"] if target.exists() else []
    for name in files:
        dest = inside(root, name)
        if dest.exists() and (not dest.is_file() or dest.is_symlink()):
            raise InvalidInputError(f"{name} exists and is not a regular file", code="CONFLICT")
        if dest.exists() and dest.read_bytes() != (source / name).read_bytes():
            conflicts.append(name)
    if conflicts and not force:
        raise InvalidInputError(
            f"the template would overwrite {', '.join(conflicts)}",
            hint="pass --force to replace them",
            code="CONFLICT",
        )


# ------------------------------------------------------------------ fetched templates


def _remote(name: str) -> Template:
    root = workspace_template()
    configs = [
        f"configs/{kind}/{name}.toml"
        for kind in ("eval", "training")
        if (root / "configs" / kind / f"{name}.toml").is_file()
    ]
    data = sorted(p.relative_to(root).as_posix() for p in (root / "data").glob("*.jsonl"))
    return _Fetched(name, "from the Osmosis workspace template", "", name, (*configs, *data), root)


@dataclass(frozen=True)
class _Fetched(Template):
    root: Path = Path()

    def source(self) -> Path:
        return self.root


def workspace_template() -> Path:
    """A local checkout, else the GitHub archive (downloaded each time, as published;
    extracted safely into our cache)."""
    local = os.environ.get("OSMOSIS_WORKSPACE_TEMPLATE_PATH")
    if local:
        path = Path(local).expanduser()
        if not path.is_dir():
            raise InvalidInputError(f"OSMOSIS_WORKSPACE_TEMPLATE_PATH {local} is not a folder")
        return path
    repo = os.environ.get("OSMOSIS_WORKSPACE_TEMPLATE_REPO") or DEFAULT_REPO
    ref = os.environ.get("OSMOSIS_WORKSPACE_TEMPLATE_REF") or "main"
    url = os.environ.get("OSMOSIS_WORKSPACE_TEMPLATE_URL") or (
        f"https://github.com/{repo}/archive/{ref}.tar.gz"
    )
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser())
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    target = cache / "osmosis-client" / "workspace-template" / key
    archive = target.with_suffix(".tar.gz")
    _download(url, archive)
    shutil.rmtree(target, ignore_errors=True)
    _extract(archive, target)
    tops = [p for p in target.iterdir() if p.is_dir()]
    return tops[0] if len(tops) == 1 else target


def _download(url: str, path: Path) -> None:
    import httpx

    from osmosis_client._tls import ssl_context

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with httpx.stream(
            "GET", url, follow_redirects=True, timeout=60, verify=ssl_context()
        ) as response:
            response.raise_for_status()
            with path.open("wb") as handle:
                for chunk in response.iter_bytes():
                    handle.write(chunk)
    except (httpx.HTTPError, OSError) as exc:
        raise OsmosisError(
            f"could not download the workspace template ({url}): {exc}",
            hint="check the network, or point OSMOSIS_WORKSPACE_TEMPLATE_PATH at a checkout",
            code="NETWORK",
        ) from exc


def _extract(archive: Path, target: Path) -> None:
    try:
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(target, filter="data")
            else:  # pragma: no cover - Pythons before the extraction filters
                for member in tar.getmembers():
                    if member.issym() or member.islnk() or ".." in Path(member.name).parts:
                        raise tarfile.TarError(f"unsafe member {member.name}")
                tar.extractall(target)
    except (tarfile.TarError, OSError) as exc:
        raise InvalidInputError(
            f"the workspace template archive is not a usable tar.gz: {exc}", code="VALIDATION"
        ) from exc
    finally:
        with contextlib.suppress(OSError):
            archive.unlink()
