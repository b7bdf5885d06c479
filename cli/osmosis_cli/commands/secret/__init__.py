"""``osmosis secret list / set / delete``: secrets stored on the platform for ``[secrets]``
(values from a hidden prompt, an environment variable or stdin — never argv). Lands with
the hosted workflow."""
