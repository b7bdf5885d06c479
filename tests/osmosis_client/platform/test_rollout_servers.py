"""client.rollout_servers.register: the route, body, scope and timeout (respx)."""

from __future__ import annotations

import json

import httpx
import respx

from tests.osmosis_client.platform.conftest import Api

MakeApi = object


def test_register_sends_the_server_and_returns_the_health_check(
    make_api,
    router: respx.MockRouter,  # type: ignore[no-untyped-def]
) -> None:
    route = router.post("/api/cli/rollout-server/register").respond(
        200,
        json={"id": 7, "status": "healthy", "health_check_result": {"server_info": {"a": 1}}},
    )
    api: Api = make_api(token="t", workspace="acme")
    result = api.call(lambda c: c.rollout_servers.register("203.0.113.5", 9000, "calc", "k-1"))
    assert (result.id, result.status) == ("7", "healthy")
    assert result.health_check_result.server_info == {"a": 1}
    request = route.calls.last.request
    assert json.loads(request.read()) == {
        "host": "203.0.113.5",
        "port": 9000,
        "agent_loop_name": "calc",
        "api_key": "k-1",
    }
    assert request.headers["X-Osmosis-Workspace"] == "acme"
    assert request.extensions["timeout"]["read"] == 15.0


def test_register_without_a_key_omits_it_and_maps_errors(
    make_api,
    router: respx.MockRouter,  # type: ignore[no-untyped-def]
) -> None:
    route = router.post("/api/cli/rollout-server/register").mock(
        side_effect=[httpx.Response(200, json={"id": "s", "status": "unhealthy"})]
    )
    api: Api = make_api(token="t", workspace="acme")
    result = api.call(lambda c: c.rollout_servers.register("h", 1, "calc"))
    assert result.status == "unhealthy" and result.health_check_result is None
    assert "api_key" not in json.loads(route.calls.last.request.read())
