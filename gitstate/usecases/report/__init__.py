"""A task's history as a page (`view`) and as Markdown (`report`): docs/report.md."""
