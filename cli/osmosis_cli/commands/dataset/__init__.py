"""``osmosis dataset validate / upload / list / info / preview / download / logs``: the
platform's datasets (the published CLI's ``dataset`` group). Lands with the hosted
workflow (datasets, secrets, a hosted run's samples)."""
