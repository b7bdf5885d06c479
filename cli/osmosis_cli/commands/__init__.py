"""The commands, one folder per group (as gh): ``auth``, ``workspace``, ``eval``,
``rubric``, ``agent_loop`` (serve, validate), and the rooms the next groups land in
(``dataset``, ``secret``, ``rollout``, ``template``, ``doctor``).

A command module holds its options (a typed object) and a short run function that
calls the SDK or the runner and hands the result to the terminal layer.
"""
