"""``osmosis rollout list / …``: the workspace's rollouts (the published CLI's ``rollout``
group). Lands with the published command surface."""
