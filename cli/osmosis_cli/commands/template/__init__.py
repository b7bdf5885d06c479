"""``osmosis template list / apply``: the workspace template's rollouts and configs (the
published CLI's ``template`` group). Lands with the published command surface."""
