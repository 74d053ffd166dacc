"""Light pages: what a reader's first view of a chapter downloads (issue 26, item 7).

Out of the box a chapter page of this Jupyter Book 1.x fetched 4.0-4.8 MB (decoded), 2.5 MB of it
machinery the page does not use:

1. Font Awesome, twice. The theme loads ``fontawesome.js`` (1.5 MB: every icon of Font Awesome as SVG
   data, to swap each ``<i class="fa-...">`` for an ``<svg>``) *and* the Font Awesome webfonts (270 KB),
   which its stylesheet needs for the icons it draws itself (admonitions, exercise pencils, external
   links, breadcrumbs). The theme's stylesheet draws ``<i class="fa-...">`` icons with those fonts as
   well, so the pages leave out ``fontawesome.js``. At the end of the build the fonts are cut down to
   the glyphs the book shows (fontTools, which comes with matplotlib), and a copy of the theme's
   stylesheet, ``pydata-sphinx-theme-light.css``, keeps only the rules of the icons the book uses and
   points at the cut fonts (a few KB in all). The icons used are read from the built pages and the
   theme's scripts; the glyphs the stylesheets draw by code point are read from the stylesheets. Five
   of the theme's rules were written for the ``<svg>``: their counterparts for the ``<i>`` are
   appended (``SVG_LIKE_ICONS``), so that every icon shows where and as it did.
2. The search index. The theme loads Sphinx's search script and the whole search index (140 KB) on
   every page for its search-as-you-type, which this book leaves off (the search box opens
   ``search.html``, which loads them itself): other pages leave them out while it is off.
3. sphinx-design's stylesheet and script (60 KB), left out of pages that use none of its components.

MathJax, the other big item, is cut where it is unpacked (``scripts/install_browser.py``): the book
loads ``tex-chtml-light.js``, MathJax's ``tex-chtml.js`` without its right-click menu (430 KB; the
hidden MathML that screen readers read stays).

The page's template (``templates/layout.html``) applies 1 and 2 to the theme's ``<head>``;
``tests/test_page_weight.py`` loads every chapter of the three books and holds each first view to
2.5 MB.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from markupsafe import Markup
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

TEMPLATES = Path(__file__).resolve().parent / "templates"
THEME_CSS = "pydata-sphinx-theme.css"  # in _static/styles/
LIGHT_CSS = "pydata-sphinx-theme-light.css"  # its light copy, written at the end of the build

_FONTAWESOME_JS = re.compile(r'[ \t]*<script[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>'
                             r'</script>\n?')
_SEARCH_JS = re.compile(r'[ \t]*<script[^>]*\bsrc="[^"]*(?:_static/searchtools\.js|_static/language_data\.js'
                        r'|searchindex\.js)(?:\?[^"]*)?"[^>]*></script>\n?')
_SD_CLASS = re.compile(r'class="(?:[^"]*\s)?sd-')
# One icon's rule in Font Awesome's stylesheet:
# `.fa-magnifying-glass:before,.fa-search:before{content:"\f002"}`
_ICON_RULE = re.compile(r'((?:\.fa-[\w-]+::?(?:before|after),?)+)\{content:("(?:[^"\\]|\\.)*")\}')
_ICON_NAME = re.compile(r"(?<![\w-])fa-[a-z0-9]+(?:-[a-z0-9]+)*")
# A webfont of the theme: `url(../vendor/fontawesome/webfonts/fa-solid-900.woff2) format("woff2"),
# url(../vendor/fontawesome/webfonts/fa-solid-900.ttf) format("truetype")`
_FONT_SRC = re.compile(r'url\((?P<dir>[^)]*/)(?P<name>fa-[\w-]+)\.woff2\)\s*format\("woff2"\)\s*,\s*'
                       r'url\([^)]*\.ttf\)\s*format\("truetype"\)')
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?")
# The theme's stylesheets were written for Font Awesome's script, which swaps each <i> for an <svg> and
# drops its family class (fa-solid); drawn by the font, five icons need what their <svg> got.
SVG_LIKE_ICONS = """
/* book/_ext/light_pages.py: icons drawn by the font where the theme's rules expect an <svg> */
.search-button-field > i[class*="fa-"] { display: inline-block; }  /* > :not(svg) is hidden < 960 px */
.bd-search i.fa-solid.fa-magnifying-glass { position: static; }  /* .fa-solid: absolute, over the input */
#pst-search-dialog[open] form.bd-search i[class*="fa-"] { font-size: var(--pst-font-size-icon); }
.bd-header-article .btn i.fa-lg { font-size: 1.3rem; }  /* its <svg> was 1.3rem wide */
.sidebar-secondary-item i[class*="fa-"] { padding-right: 0; }  /* the <svg> had no padding */
"""


def light_head(html: str, search_as_you_type: Any = False) -> Markup:
    """The theme's ``<head>`` markup without fontawesome.js, with the light stylesheet, and without
    the search scripts unless search-as-you-type needs them on every page."""
    html = _FONTAWESOME_JS.sub("", str(html))
    html = html.replace(f"_static/styles/{THEME_CSS}", f"_static/styles/{LIGHT_CSS}")
    if str(search_as_you_type).lower() not in ("true", "1"):
        html = _SEARCH_JS.sub("", html)
    return Markup(html)


def add_templates(app: Sphinx, config: Any) -> None:
    config.templates_path.append(str(TEMPLATES))


def register_filter(app: Sphinx) -> None:
    templates = getattr(app.builder, "templates", None)
    environment = getattr(templates, "environment", None)
    if environment is not None:
        environment.filters["light_head"] = light_head


def drop_unused_design(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                       doctree: Any) -> None:
    """Leave sphinx-design's stylesheet and script out of a page that uses none of its components."""
    if "body" not in context or _SD_CLASS.search(context["body"]):
        return
    for key, name in (("css_files", "sphinx-design.min.css"), ("script_files", "design-tabs.js")):
        files = context.get(key)
        if files:
            context[key] = [f for f in files if not str(getattr(f, "filename", f)).endswith(name)]


# ---------------------------------------------------------------------------------------------------
# The icons: the theme's stylesheet with only the icons the book uses, and fonts with only their glyphs
# ---------------------------------------------------------------------------------------------------
def _characters(css_string: str) -> set[int]:
    """The code points of a CSS string's characters (``"\\f002"`` or the character itself)."""
    text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), css_string.strip('"'))
    return {ord(c) for c in text}


def _private_characters(css: str) -> set[int]:
    """The private-use code points (where icon fonts keep their glyphs) a stylesheet names."""
    found = {ord(c) for c in css if 0xE000 <= ord(c) <= 0xF8FF or ord(c) >= 0xF0000}
    found |= {int(h, 16) for h in _ESCAPE.findall(css) if 0xE000 <= int(h, 16) <= 0xF8FF}
    return found


def icons_in_use(outdir: Path) -> set[str]:
    """Every ``fa-*`` name in the built pages and in the scripts they load (Font Awesome's own aside)."""
    names: set[str] = set()
    for path in outdir.rglob("*.html"):
        names |= set(_ICON_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    static = outdir / "_static"
    for path in static.rglob("*.js"):
        relative = path.relative_to(static).as_posix()
        if not path.is_file() or relative.startswith(("mathjax/", "reveal/", "scripts/fontawesome")):
            continue
        names |= set(_ICON_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def light_stylesheet(css: str, used: set[str]) -> tuple[str, set[int]]:
    """(the theme's stylesheet with only the rules of the icons in ``used``, the code points its icons
    and its other rules draw)."""
    characters: set[int] = set()

    def keep(match: re.Match) -> str:
        names = set(re.findall(r"\.(fa-[\w-]+)::?(?:before|after)", match.group(1)))
        if names & used:
            characters.update(_characters(match.group(2)))
            return match.group(0)
        return ""

    light = _ICON_RULE.sub(keep, css)
    characters |= _private_characters(light)
    return light, characters


def cut_font(source: Path, target: Path, characters: set[int]) -> int:
    """Write the glyphs of ``characters`` that ``source`` has into the WOFF ``target``; its size."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.flavor = "woff"  # zlib: WOFF 2 would need brotli, which is not installed
    options.layout_features = ["*"]
    options.notdef_outline = True
    font = TTFont(str(source))
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(characters & set(font.getBestCmap())))
    subsetter.subset(font)
    buffer = io.BytesIO()
    font.flavor = "woff"
    font.save(buffer)
    target.write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


def write_light_icons(app: Sphinx, exception: Exception | None) -> None:
    """At the end of an HTML build: ``styles/pydata-sphinx-theme-light.css`` and its cut fonts."""
    if exception is not None or getattr(app.builder, "format", "") != "html":
        return
    outdir = Path(app.outdir)
    styles = outdir / "_static" / "styles"
    theme_css = styles / THEME_CSS
    if not theme_css.is_file():
        raise ExtensionError(f"light_pages: the theme's stylesheet {theme_css} is missing (another theme?)")
    used = icons_in_use(outdir)
    css, characters = light_stylesheet(theme_css.read_text(encoding="utf-8"), used)
    for other in (outdir / "_static").rglob("*.css"):  # icons other stylesheets draw with the fonts
        if other != theme_css and "mathjax" not in other.parts and other.name != LIGHT_CSS:
            characters |= _private_characters(other.read_text(encoding="utf-8", errors="replace"))
    sizes: dict[str, int] = {}

    def light_font(match: re.Match) -> str:
        name = match.group("name")
        source = (styles / (match.group("dir") + name + ".ttf")).resolve()
        if not source.is_file():
            raise ExtensionError(f"light_pages: the theme's stylesheet names the font {source}, which is "
                                 "missing")
        if name not in sizes:
            sizes[name] = cut_font(source, source.with_name(f"{name}.light.woff"), characters)
        return f'url({match.group("dir")}{name}.light.woff) format("woff")'

    css = _FONT_SRC.sub(light_font, css)
    if not sizes:
        raise ExtensionError("light_pages: no Font Awesome webfont found in the theme's stylesheet; its "
                             "icons would not show without fontawesome.js (has the theme changed?)")
    (styles / LIGHT_CSS).write_text(css + SVG_LIKE_ICONS, encoding="utf-8")
    logger.info(f"light_pages: {len(used)} icon names in use, {len(characters)} glyphs; "
                f"{LIGHT_CSS} {len(css) // 1000} KB, fonts "
                + ", ".join(f"{name} {size / 1000:.1f} KB" for name, size in sorted(sizes.items())))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", add_templates)
    app.connect("builder-inited", register_filter)
    app.connect("html-page-context", drop_unused_design)
    app.connect("build-finished", write_light_icons)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
