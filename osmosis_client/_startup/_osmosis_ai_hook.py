"""Makes ``import osmosis_ai`` work in any interpreter with osmosis-client installed and no
real osmosis-ai (a script, ``python -m server``, ``uvicorn server:app``, pytest, CI).

Installed as a top-level module and imported at start-up by ``osmosis_ai_compat.pth``, so
it must cost nothing: it imports nothing and only appends a finder to the *end* of
``sys.meta_path``. A real ``osmosis_ai`` on ``sys.path`` is found first by the standard
finders and always wins; only when none exists is this finder asked, and only then is
osmosis-client's compatibility layer (``osmosis_client.rollout.compat``) imported.
Set ``OSMOSIS_NO_OSMOSIS_AI_LAYER=1`` to turn it off.
"""

import sys


class _LastResortFinder:
    """Asked for ``osmosis_ai…`` only when no installed package answered."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname != "osmosis_ai" and not fullname.startswith("osmosis_ai."):
            return None
        try:
            from osmosis_client.rollout.compat import last_resort_spec
        except ImportError:  # osmosis-client half-installed: behave as if absent
            return None
        return last_resort_spec(fullname)


def _install() -> None:
    import os

    if os.environ.get("OSMOSIS_NO_OSMOSIS_AI_LAYER"):
        return
    if not any(isinstance(f, type) and f.__name__ == "_LastResortFinder" for f in sys.meta_path):
        sys.meta_path.append(_LastResortFinder)


_install()
