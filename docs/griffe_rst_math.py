"""A griffe extension for the docs build: reST math in docstrings rendered as MathJax (``pymdownx.arithmatex``).

The package's docstrings write math in reST (``:math:`x```, ``.. math::`` blocks) and literal blocks as
``Example::``. The site is Markdown, so this converts them when mkdocstrings loads each docstring, at render time:
the source keeps one form and nothing in the package changes. ``tests/test_docs_build.py`` fails on any raw
``:math:`` or ``.. math::`` left in the built HTML.

* ``:math:`body``` -> ``$body$`` (inline math)
* ``.. math::`` followed by an indented block -> ``$$ ... $$`` (display math)
* a line ending in ``::`` (``Example::``) -> ``:``; the indented block under it stays a code block
* an ``Args:`` entry naming several parameters (``p, n: ...``) -> one entry each (``n: as ``p``.`` first)
"""

from __future__ import annotations

import re

import griffe

INLINE = re.compile(r":math:`([^`]+)`")
BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>.*)\n(?P<body>(?:(?:(?P=indent)[ \t]+.*)?\n)*)",
                   re.M)
LITERAL = re.compile(r"(?<=\S)::[ \t]*$", re.M)
SHARED_ARG = re.compile(r"^(?P<indent>[ \t]+)(?P<names>\w+(?:, \w+)+):(?P<rest>.*)$", re.M)


def _shared(m: re.Match) -> str:
    first, *others = m.group("names").split(", ")
    ind = m.group("indent")
    return "".join(f"{ind}{o}: as ``{first}``.\n" for o in others) + f"{ind}{first}:{m.group('rest')}"


def _block(m: re.Match) -> str:
    indent = m.group("indent")
    lines = [m.group("first")] + m.group("body").splitlines()
    body = "\n".join(f"{indent}{ln.strip()}" for ln in lines if ln.strip())
    return f"\n{indent}$$\n{body}\n{indent}$$\n\n"


def convert(text: str) -> str:
    """``text`` with its reST math as arithmatex math and its ``::`` literal markers as ``:``."""
    text = BLOCK.sub(_block, text if text.endswith("\n") else text + "\n")
    text = INLINE.sub(lambda m: f"${m.group(1)}$", text)
    text = SHARED_ARG.sub(_shared, text)
    return LITERAL.sub(":", text).rstrip("\n")


class RestMath(griffe.Extension):
    """Converts every loaded object's docstring with ``convert``."""

    def on_instance(self, *, node, obj, agent, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)
