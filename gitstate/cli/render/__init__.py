"""What more than one command prints, one module per thing printed (a write, an archive, a
decision record): commands import these and cli/output.py, never another command module."""
