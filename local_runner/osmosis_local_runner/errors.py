"""The runner's own error, shared by every room: a run stopped for a reason that is not
one attempt's (exit 1; finished attempts are kept)."""

from __future__ import annotations

from osmosis_client.errors import OsmosisError


class RunAborted(OsmosisError):
    """The run stopped for a reason that is not the rollouts' fault (exit 1)."""

    code = "RUN_ABORTED"
