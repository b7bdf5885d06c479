"""A Hugging Face Hub repository made ready to receive, for every door that publishes
there (``eval push --to hf:``, ``--log-to hf:``, a site sent to a Space): the token
checked before anything else, the repository created private — public only when asked —
or, when it exists already, its privacy checked before a byte is sent; the Hub's
failures said in words (a refused token, no network), never as a traceback.

Why checked here and not left to ``create_repo(exist_ok=True)``: that call leaves an
existing repository as it is, so a push meant to be private would land in a public one."""

from __future__ import annotations

from typing import Any

from osmosis_client.errors import AuthError, InvalidInputError, OsmosisError

#: what to run when no Hugging Face token is found (huggingface_hub ≥ 1.0's command)
LOGIN = "log in with `hf auth login`, or set HF_TOKEN"


def hub_api() -> Any:
    """An ``HfApi`` as the user set it up (``HF_ENDPOINT``, ``HF_TOKEN`` or a stored
    login), refused at once when no token is found: every write needs one."""
    from huggingface_hub import HfApi, get_token

    if not get_token():
        raise AuthError(
            "no Hugging Face token was found: nothing was sent", hint=LOGIN, code="HUB_NO_TOKEN"
        )
    return HfApi()


def ready_repo(
    api: Any, repo: str, repo_type: str, *, public: bool, space_sdk: str | None = None
) -> None:
    """``repo`` exists and may receive this push: created (private unless ``public``),
    or found private — or public when ``public`` was asked. A public repository is never
    written to by a push that did not ask to be public."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        found = api.repo_info(repo, repo_type=repo_type)
    except RepositoryNotFoundError:
        found = None
    if found is None:
        extra = {"space_sdk": space_sdk} if space_sdk else {}
        api.create_repo(repo, repo_type=repo_type, private=not public, **extra)
        return
    if not found.private and not public:
        raise InvalidInputError(
            f"the Hub {repo_type} {repo} is public and this push was not asked to be public: "
            "nothing was sent",
            hint="publish into it only if everything sent may be public, or name a private "
            "repository (a new one is created private)",
            code="HUB_PUBLIC",
            data={"repo": repo, "repo_type": repo_type},
        )


def hub_failure(exc: Exception, repo: str, endpoint: str) -> OsmosisError:
    """What the Hub's client raised, as one of our errors with its cause kept by the
    caller (``raise … from exc``): a refused token, a repository we may not write, no
    network, or the Hub's own message."""
    if isinstance(exc, OsmosisError):
        return exc
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status in (401, 403):
        return AuthError(
            f"the Hub at {endpoint} refused the token for {repo} (HTTP {status})",
            hint=f"check the token's write access, or {LOGIN}",
            code="HUB_TOKEN_REFUSED",
        )
    if status is None and _is_connection(exc):
        return OsmosisError(
            f"cannot reach the Hub at {endpoint} ({type(exc).__name__}): nothing was published",
            hint="check the network (and HF_ENDPOINT), then send it again",
            code="HUB_UNREACHABLE",
        )
    said = " ".join(str(exc).split())[:300]
    shown = f"HTTP {status}: " if status else ""
    return OsmosisError(f"the Hub failed for {repo}: {shown}{said}", code="HUB_FAILED")


def _is_connection(exc: BaseException) -> bool:
    """A failure to connect, whichever HTTP library huggingface_hub uses (requests before
    1.0, httpx after): told by the exception's kind, along its causes."""
    seen: BaseException | None = exc
    while seen is not None:
        names = {cls.__name__ for cls in type(seen).__mro__}
        if names & {
            "ConnectError",
            "ConnectionError",
            "ConnectTimeout",
            "NetworkError",
            "TimeoutException",
            "OSError",
        } and not names & {"HTTPStatusError"}:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
