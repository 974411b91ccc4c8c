"""`python -m gitstate` runs the command line."""

from gitstate.cli import main

main()
