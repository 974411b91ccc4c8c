"""Background agent jobs (docs/jobs.md): queue, supervise, harvest — the sub-agy runtime in git.

submit.py creates a job and spawns its supervisor; supervise.py is that detached process (queue
slot, agent attempts, result, record); control.py reads and steers jobs (status, watch, result,
cancel, cleanup, pending); queue.py is the slot accounting; agents.py names the agent CLIs'
adapters (they live in gitstate/agents/, one module per CLI); pending.py the one rule of what
waits to be harvested; plan.py the prompt; files.py the runtime folders and probe.py their light
scan, which the stop guard shares; records.py the git side (worktree, branch, record commits);
doctor.py doctor and quota.
"""
