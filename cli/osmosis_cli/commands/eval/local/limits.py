"""The options that stop a local run before its end, or an attempt before its own: what
it may cost, how a call without usage counts, an attempt's tokens, and how many first
calls refused alike make the request broken."""

from __future__ import annotations
