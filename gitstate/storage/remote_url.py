"""A remote as it may be written down: a URL's user-info (`user:TOKEN@`) never leaves this call.

`sync https://user:TOKEN@host/repo` must work, but the URL lands in merge subjects, reflog
messages, fetched-copy ref names, config and output; each of those gets `public(url)` instead
(docs/security.md). Pure: no git, no I/O.
"""

from __future__ import annotations

import re

# scheme://[userinfo@]host…: the user-info ends at the last `@` before the path starts.
_SCHEME_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>.*)$", re.DOTALL)


def has_credentials(url: str) -> bool:
    return public(url) != url


def public(url: str) -> str:
    """`url` without its user-info when that may hold a secret (a password or a token).

    `ssh://git@host/…` and scp-like `git@host:path` name an ssh user, not a secret: kept. Any
    user-info with a `:` (user:password), and a lone user-info on http(s) (`https://TOKEN@host`,
    the form GitHub and GitLab tokens take), is dropped.
    """
    found = _SCHEME_URL.match(url)
    if found is None:
        return url  # a remote name, a path, or scp-like `user@host:path`
    scheme, rest = found["scheme"], found["rest"]
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return url
    secretive = ":" in userinfo or scheme.lower().startswith(("http", "ftp"))
    if not secretive:
        return url
    return f"{scheme}{host}{slash}{path}"
