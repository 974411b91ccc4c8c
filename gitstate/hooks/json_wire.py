"""The JSON an agent hook reads and writes, through CPython's C codec alone (docs/hooks.md,
"Start-up cost").

`import json` costs an agent hook nearly half its start: json.decoder and json.encoder import
`re` (and with it enum, functools and collections) for their pure-Python fallbacks and one
whitespace pattern. The parsing and the string escaping themselves are `_json`'s C functions,
the very ones json.loads and json.dumps call; this module calls them without that layer:
`loads` is json.loads for a str, `dumps` is json.dumps(value, ensure_ascii=False,
separators=(",", ":")) for the values hooks answer with (dict, list, str, int, bool, None).
Without `_json` (another Python implementation) both are json's own. tests/test_json_wire.py
compares them with json on generated values.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# json.decoder's WHITESPACE (r"[ \t\n\r]*"), around the one value a document holds.
_SPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """What _json.make_scanner reads from a JSONDecoder: json.loads' defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan: Callable[[str, int], tuple[Any, int]] | None
_string: Callable[[str], str] | None
try:
    import _json
except ImportError:  # no C codec: json's own functions, whatever they cost to import
    _scan = _string = None
else:
    _scan = _json.make_scanner(_Context())  # type: ignore[arg-type]  # a JSONDecoder's duck
    _string = _json.encode_basestring


def loads(text: str) -> Any:
    """json.loads(text): the value, or ValueError (json.JSONDecodeError when json is loaded),
    or RecursionError for a document nested deeper than the interpreter's stack."""
    if _scan is None:
        import json

        return json.loads(text)
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as err:
        raise ValueError(f"Expecting value: char {err.value}") from None
    except SystemError:
        # The scanner makes its error a json.decoder.JSONDecodeError, which CPython 3.10 and
        # 3.11 look up without importing json.decoder (3.12 on import it): until json is
        # loaded, a document that breaks off inside an object or a string surfaces there as
        # "returned NULL without setting an exception".
        raise ValueError("malformed JSON") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: object) -> str:
    """json.dumps(value, ensure_ascii=False, separators=(",", ":")) for dict (str keys), list,
    tuple, str, int, bool and None; TypeError for anything else (a hook answers with no more)."""
    if _string is None:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    parts: list[str] = []
    _encode(value, parts, 0)
    return "".join(parts)


def _encode(value: object, parts: list[str], depth: int) -> None:
    if depth > 100:  # a hook's answer is two levels deep; a cycle is a bug, not a hang
        raise ValueError("nested too deep")
    assert _string is not None
    if isinstance(value, str):
        parts.append(_string(value))
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int):
        parts.append(int.__repr__(value))
    elif isinstance(value, dict):
        parts.append("{")
        for index, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            parts.append("," if index else "")
            parts.append(_string(key))
            parts.append(":")
            _encode(item, parts, depth + 1)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            parts.append("," if index else "")
            _encode(item, parts, depth + 1)
        parts.append("]")
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
