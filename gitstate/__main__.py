"""`python -m gitstate` runs the command line (agent hooks take the same fast path)."""

from gitstate.entry import main

main()
