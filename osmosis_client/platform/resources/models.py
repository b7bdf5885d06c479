"""``client.models``: base models, LoRA adapters and their inference deployments
(published-cli-0.3.8-train.md §3).

Better than the published client: ``get`` falls back from the LoRA route to the base
route on a 404 only (a scope or permission error is said as such, never "not found"),
and a deploy refused by the workspace's deployment quota names the quota.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable, Iterator

from osmosis_client.errors import ConflictError, NotFoundError, OsmosisError
from osmosis_client.llm.prices import Price, PriceTable
from osmosis_client.platform._transport import RequestOptions, encode_segment
from osmosis_client.platform.model_models import (
    BaseModelDetail,
    BaseModelPage,
    Deployment,
    LoraModelDetail,
    LoraModelPage,
)
from osmosis_client.platform.models import parse
from osmosis_client.platform.resources import _base as base

#: what a platform says when a deploy would exceed the workspace's quota
QUOTA_CODES = ("DEPLOYMENT_LIMIT_REACHED",)

ModelDetail = LoraModelDetail | BaseModelDetail


def base_list_call(limit: int, offset: int) -> base.Call[BaseModelPage]:
    read = base.reader(BaseModelPage, "base model list")
    return base.page_call("/api/cli/models/base", read, limit, offset)


def lora_list_call(limit: int, offset: int) -> base.Call[LoraModelPage]:
    read = base.reader(LoraModelPage, "LoRA model list")
    return base.page_call("/api/cli/models/lora", read, limit, offset)


def lora_call(name: str) -> base.Call[LoraModelDetail]:
    return base.Call(
        RequestOptions("GET", f"/api/cli/models/{encode_segment(name)}", scope="required"),
        lambda data: parse(LoraModelDetail, data, what="LoRA model"),
    )


def base_call(name: str) -> base.Call[BaseModelDetail]:
    return base.Call(
        RequestOptions("GET", f"/api/cli/models/base/{encode_segment(name)}", scope="required"),
        lambda data: parse(BaseModelDetail, data, what="base model"),
    )


def deployment_call(name: str, action: str) -> base.Call[Deployment]:
    return base.Call(
        RequestOptions(
            "POST", f"/api/cli/models/{encode_segment(name)}/{action}", json={}, scope="required"
        ),
        lambda data: parse(Deployment, data, what=f"{action} answer"),
    )


def _not_found(name: str) -> NotFoundError:
    return NotFoundError(
        f"model not found: {name}", status_code=404, hint="list the models to see their names"
    )


def _names(pages: list[LoraModelPage | BaseModelPage]) -> list[str]:
    """The model names of the first pages (what a misspelt name is compared with)."""
    return [m.model_name for page in pages for m in page.models if m.model_name]


def _quota(exc: ConflictError, page: LoraModelPage | None) -> ConflictError:
    """A deploy refused by the quota, saying the quota and what holds it (the deployed
    models of the first LoRA page: the ones to undeploy)."""
    used, most = (page.active_deployments, page.max_active_deployments) if page else (None, None)
    deployed = [m.model_name for m in page.models if m.deployed and m.model_name] if page else []
    if most:
        holding = f": {', '.join(deployed)}" if deployed else ""
        exc.message = f"{exc.message} ({used} of {most} inference deployments in use{holding})"
    exc.data = {
        **exc.data,
        "active_deployments": used,
        "max_active_deployments": most,
        "deployed": deployed,
    }
    first = f" ({deployed[0]}, say)" if deployed else ""
    exc.hint = exc.hint or f"undeploy one of the deployed LoRA models first{first}"
    return exc


def _is_quota(exc: ConflictError) -> bool:
    return exc.code in QUOTA_CODES or str(exc.body.get("platform_code")) in QUOTA_CODES


class Models(base.SyncResource):
    def list_base(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> BaseModelPage:
        """One page of base models (at most 50)."""
        return self._client._execute(base_list_call(limit, offset))

    def list_lora(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> LoraModelPage:
        """One page of LoRA adapters (at most 50), with the deployment quota."""
        return self._client._execute(lora_list_call(limit, offset))

    def base_pages(self, page_size: int = base.PAGE_LIMIT) -> Iterator[BaseModelPage]:
        return base.walk_pages(lambda offset: self.list_base(page_size, offset))

    def lora_pages(self, page_size: int = base.PAGE_LIMIT) -> Iterator[LoraModelPage]:
        return base.walk_pages(lambda offset: self.list_lora(page_size, offset))

    def get(self, name: str) -> ModelDetail:
        """A LoRA adapter by name, else a base model (by name or Hugging Face path)."""
        if "/" not in name:
            try:
                return self._client._execute(lora_call(name))
            except NotFoundError:
                pass
        try:
            return self._client._execute(base_call(name))
        except NotFoundError as exc:
            error = _not_found(name)
            with contextlib.suppress(OsmosisError):  # the suggestion is a courtesy
                pages: list[LoraModelPage | BaseModelPage] = [self.list_lora(), self.list_base()]
                base.suggest_name(error, name, _names(pages))
            raise error from exc

    def deploy(self, name: str) -> Deployment:
        """Serve the LoRA adapter for inference (idempotent)."""
        try:
            return self._client._execute(deployment_call(name, "deploy"))
        except ConflictError as exc:
            if not _is_quota(exc):
                raise
            try:
                page: LoraModelPage | None = self.list_lora()
            except Exception:  # the quota's numbers are a courtesy
                page = None
            raise _quota(exc, page) from exc

    def undeploy(self, name: str) -> Deployment:
        """Stop serving the LoRA adapter (idempotent)."""
        return self._client._execute(deployment_call(name, "undeploy"))

    def prices(self, names: Iterable[str]) -> PriceTable:
        """The platform's published inference prices of these base models (a model it
        does not know, or prices no price for, is left out: never guessed)."""
        found: dict[str, Price] = {}
        for name in dict.fromkeys(names):
            try:
                model = self._client._execute(base_call(name))
            except NotFoundError:
                continue
            price = platform_price(model)
            if price is not None:
                found[name] = price
        return PriceTable(found, "platform")


def platform_price(model: BaseModelDetail) -> Price | None:
    """A base model's published price (no reasoning price exists: reasoning is output,
    as every provider bills it); None when input or output is not published."""
    given, answer = (
        model.inference_input_usd_per_million_tokens,
        model.inference_output_usd_per_million_tokens,
    )
    if given is None or answer is None:
        return None
    try:
        return Price(given, answer, cache_read=model.inference_cached_input_usd_per_million_tokens)
    except ValueError:  # negative or not finite: no price, never a credit
        return None


class AsyncModels(base.AsyncResource):
    async def list_base(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> BaseModelPage:
        return await self._client._execute(base_list_call(limit, offset))

    async def list_lora(self, limit: int = base.PAGE_LIMIT, offset: int = 0) -> LoraModelPage:
        return await self._client._execute(lora_list_call(limit, offset))

    def base_pages(self, page_size: int = base.PAGE_LIMIT) -> AsyncIterator[BaseModelPage]:
        return base.awalk_pages(lambda offset: self.list_base(page_size, offset))

    def lora_pages(self, page_size: int = base.PAGE_LIMIT) -> AsyncIterator[LoraModelPage]:
        return base.awalk_pages(lambda offset: self.list_lora(page_size, offset))

    async def get(self, name: str) -> ModelDetail:
        if "/" not in name:
            try:
                return await self._client._execute(lora_call(name))
            except NotFoundError:
                pass
        try:
            return await self._client._execute(base_call(name))
        except NotFoundError as exc:
            error = _not_found(name)
            with contextlib.suppress(OsmosisError):  # the suggestion is a courtesy
                pages: list[LoraModelPage | BaseModelPage] = [
                    await self.list_lora(),
                    await self.list_base(),
                ]
                base.suggest_name(error, name, _names(pages))
            raise error from exc

    async def deploy(self, name: str) -> Deployment:
        try:
            return await self._client._execute(deployment_call(name, "deploy"))
        except ConflictError as exc:
            if not _is_quota(exc):
                raise
            try:
                page: LoraModelPage | None = await self.list_lora()
            except Exception:
                page = None
            raise _quota(exc, page) from exc

    async def undeploy(self, name: str) -> Deployment:
        return await self._client._execute(deployment_call(name, "undeploy"))


__all__ = ["AsyncModels", "Models"]
