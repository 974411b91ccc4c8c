"""The commit graph drawn as `git log --graph` draws it: one column per line of descent, `*`
for the commit, `|` a line passing by, `\\` a merge's other parent branching off to the right,
`/` a line joining one to its left (over `_` when it passes other lines on its way).

Pure: commits go in (in graph order: history.graph_log) with their parents, rows come out. Any
DAG is drawn: a parent that two lines lead to closes the right line into the left one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

# A row: the graph's text, and the commit it carries (None for a connecting row).
Row = tuple[str, "str | None"]


def _row(width: int, marks: dict[int, str]) -> str:
    cells = [" "] * max(width, max(marks, default=-1) + 1)
    for at, char in marks.items():
        cells[at] = char
    return "".join(cells)


def rows(commits: Sequence[tuple[str, Sequence[str]]]) -> Iterator[Row]:
    """The graph rows for `commits` (each `(id, parent ids)`, children before parents); a
    parent not among them keeps its line to the end, as git's do under `-n`."""
    lanes: list[str] = []
    for commit, all_parents in commits:
        parents = list(dict.fromkeys(all_parents))
        if commit not in lanes:
            lanes.append(commit)
        col = lanes.index(commit)
        while commit in lanes[col + 1 :]:  # other lines lead here too: they join first
            right = len(lanes) - 1 - lanes[::-1].index(commit)
            target = max(i for i in range(right) if lanes[i] == commit)  # the nearest
            yield _join(lanes, right, target), None
        # Padded as git pads it: the text starts after the widest row this commit makes.
        width = 2 * (len(lanes) + max(len(parents) - 1, 0))
        marks = {2 * i: "|" for i in range(len(lanes))}
        marks[2 * col] = "*"
        yield _row(width, marks), commit
        if not parents:
            del lanes[col]
            if col < len(lanes):  # the lines to its right move left into the gap
                marks = {2 * i: "|" for i in range(col)}
                marks.update({2 * k + 1: "/" for k in range(col, len(lanes))})
                yield _row(0, marks).rstrip(), None
            continue
        lanes[col] = parents[0]
        for n, extra in enumerate(parents[1:], start=1):  # left to right, in parent order
            at = col + n
            marks = {2 * i: "|" for i in range(at)}
            marks.update({2 * k + 1: "\\" for k in range(at - 1, len(lanes))})
            lanes.insert(at, extra)
            yield _row(0, marks).rstrip(), None


def _join(lanes: list[str], right: int, target: int) -> str:
    """Close the line in column `right` into column `target`; the lines right of it move left."""
    marks = {2 * i: "|" for i in range(right)}
    marks.update({2 * i + 1: "_" for i in range(target, right - 1)})
    marks[2 * right - 1] = "/"
    marks.update({2 * k - 1: "/" for k in range(right + 1, len(lanes))})
    del lanes[right]
    return _row(0, marks).rstrip()
