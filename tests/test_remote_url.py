"""A URL's credentials never get written down (docs/security.md): the pure half."""

from __future__ import annotations

import pytest

from gitstate.storage.remote_url import has_credentials, public


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:s3cr3t@example.com/team/repo.git", "https://example.com/team/repo.git"),
        ("https://ghp_tokentokentoken@github.com/o/r", "https://github.com/o/r"),
        ("http://a:b@host:8080/x", "http://host:8080/x"),
        ("https://user:p@ss@host/r", "https://host/r"),  # the last @ ends the user-info
        ("ssh://git@example.com/r.git", "ssh://git@example.com/r.git"),  # an ssh user
        ("ssh://git:pw@example.com/r.git", "ssh://example.com/r.git"),
        ("git@example.com:team/repo.git", "git@example.com:team/repo.git"),
        ("https://example.com/path@with-at", "https://example.com/path@with-at"),
        ("origin", "origin"),
        ("/srv/git/repo.git", "/srv/git/repo.git"),
        ("file:///srv/git/repo.git", "file:///srv/git/repo.git"),
    ],
)
def test_public(url: str, expected: str) -> None:
    assert public(url) == expected
    assert has_credentials(url) == (url != expected)
