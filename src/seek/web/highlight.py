"""Code as HTML, highlighted on the server by Pygments (issue 16: no script or style from a
CDN). Pygments escapes every character of the code, so the page may insert the result."""

from __future__ import annotations

from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

_FORMATTER = HtmlFormatter(nowrap=True)


def highlight(path: str, code: str, mark: int | None = None) -> str:
    """``code`` as spans with Pygments' short class names (styled by ``ui.css``); line
    ``mark`` (1-based in ``code``) wrapped in ``<span class="hll">``."""
    try:
        lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False, ensurenl=False)
    formatter = _FORMATTER if mark is None else HtmlFormatter(nowrap=True, hl_lines=[mark])
    return pygments_highlight(code, lexer, formatter)
