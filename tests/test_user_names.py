"""Your name on the remote (docs/sync.md, "Your name on the remote"; issue 12, item 9).

The name is docs/sync.md's slug, unchanged, so every chain already on a remote keeps its name;
two values that give one name are told apart by who wrote the chain: the second person is
refused with a hint, never merged into the first one's state.
"""

from __future__ import annotations

import pytest
from test_sync import Machine, Net, net, run_git, start_task
from test_sync_hostile import synced

from gitstate.usecases.sync.carry import user_slug
from gitstate.usecases.sync.trust import Trust

__all__ = ["net"]  # the fixture, shared with test_sync


def person(net: Net, name: str, email: str, agy_user: str | None) -> Machine:
    """A clone whose snapshots are written as `email` (the suite's author is everyone's)."""
    machine = net.clone(name, email)
    machine.env.update(
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
    )
    if agy_user is not None:
        machine.git("config", "agy.user", agy_user)
    return machine


def remote_ref(net: Net, name: str) -> str | None:
    out = run_git(net.remote, "rev-parse", "--verify", "-q", name, check=False)
    return out.strip() or None


@pytest.mark.parametrize(
    ("given", "name"),
    [
        ("dev.person@example.com", "dev.person-example.com"),  # every existing default name
        ("dev.person-example.com", "dev.person-example.com"),  # what init writes: unchanged
        ("a b", "a-b"),
        ("a:b", "a-b"),
        ("a@b", "a-b"),
        ("A-B", "a-b"),
    ],
)
def test_the_name_is_the_documented_slug(given: str, name: str) -> None:
    assert user_slug(given) == name


def trust(user: str, by_slug: bool) -> Trust:
    return Trust(user, frozenset({"p2@example.com"}), False, False, frozenset(), by_slug)


def test_an_address_claims_a_name_by_its_slug_only_for_a_plain_agy_user() -> None:
    # agy.user unset or plain (as init writes it): an address whose slug it is counts as yours.
    assert trust("a-b", by_slug=True).mine("A@B")
    # agy.user `a b` (its name made by replacing a character): only your own addresses do.
    assert not trust("a-b", by_slug=False).mine("a@b")
    assert trust("a-b", by_slug=False).mine("P2@example.com")


@pytest.mark.parametrize(
    ("first_email", "first_user"),
    [
        pytest.param("p1@example.com", "a b", id="agy.user-a-b"),
        pytest.param("a@b", None, id="email-a@b"),
    ],
)
def test_the_second_value_for_one_name_is_refused_with_a_hint(
    net: Net, first_email: str, first_user: str | None
) -> None:
    first = person(net, "first", first_email, first_user)
    start_task(first)
    assert first.run("sync").returncode == 0
    theirs = remote_ref(net, "refs/agy/users/a-b/state")
    assert theirs is not None
    second = person(net, "second", "p2@example.com", "a:b")
    start_task(second, "--set", "goal=something else entirely")
    mine = second.tip()
    code, report, warnings = synced(second)
    assert code == 1, (report, warnings)
    assert [s["ref"] for s in report["skipped"]] == ["refs/agy-remotes/origin/users/a-b/state"]
    (warning,) = warnings
    assert "the name a-b is taken on the remote" in warning
    assert first_email.lower() in warning and "git config agy.user NAME" in warning
    # Nothing of the first person's state reached the second's chain; the remote kept theirs.
    assert second.tip() == mine
    assert "something else entirely" in second.tip_text()
    assert remote_ref(net, "refs/agy/users/a-b/state") == theirs
    # The first person is not disturbed.
    assert first.run("sync").returncode == 0
    # Another name, and the second person's chain travels.
    second.git("config", "agy.user", "a-b-two")
    code, report, warnings = synced(second)
    assert code == 0, warnings
    assert remote_ref(net, "refs/agy/users/a-b-two/state") == mine


def test_an_agy_user_that_gives_no_name_says_so(net: Net) -> None:
    machine = net.clone("dots")
    start_task(machine)
    machine.git("config", "agy.user", "..")
    proc = machine.run("sync")
    assert proc.returncode == 1
    first, second = proc.stderr.splitlines()[:2]
    assert first == (
        "error: sync needs your name for the remote: agy.user '..' gives no usable name "
        "(dots and spaces alone make none)"
    )
    assert second.startswith("hint: git config agy.user NAME")
    doctor = machine.run("doctor")
    assert "agy.user '..' gives no usable name" in doctor.stdout
