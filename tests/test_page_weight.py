"""The weight of a chapter page: what a reader's first view downloads, in each of the three books.

Every chapter page of the English, 简体中文 and 繁體中文 books is loaded over HTTP from the built book in
headless Chromium, once, as a reader opens it for the first time (a fresh browser, nothing cached):
the page, everything it loads, MathJax's typesetting and the fonts it draws with, without scrolling.
The decoded bytes of every response (the browser's Resource Timing: the page's own entry and one per
resource) must add up to at most 2.5 MB, on a phone and a slow link as much as anywhere
(issue 26, item 7). Interactive views of up to about 300 KB are to be added to some chapters, so the
book keeps its chapters well under that (book/_ext/light_pages.py and the MathJax that
scripts/install_browser.py writes); a page over the limit fails with what it loaded, largest first.

Needs what tests/test_browser.py needs (a built book, Chromium); ``make test`` runs it beside that test.
"""

from __future__ import annotations

import re

import pytest

from tests.test_browser import (  # noqa: F401 - browser, chromium and site are fixtures
    _WAIT_FOR_MATHJAX,
    CHAPTER_PAGES,
    DESKTOP,
    PAGE_TIMEOUT_MS,
    browser,
    chromium,
    site,
)

pytestmark = pytest.mark.browser

MAX_BYTES = 2_500_000  # 2.5 MB, decoded
BOOKS = {"en": "", "zh_CN": "zh_CN/", "zh_TW": "zh_TW/"}

# The decoded size of the page and of every resource it loaded, once MathJax has typeset (first_view
# waits for it) and the fonts it asked for have arrived: the list of resources no longer grows.
_FIRST_VIEW = """async () => {
    await document.fonts.ready;
    let entries = [], count = -1;
    for (let i = 0; i < 20 && entries.length !== count; i++) {
        count = entries.length;
        await new Promise(done => setTimeout(done, 100));
        entries = performance.getEntriesByType('resource');
    }
    const page = performance.getEntriesByType('navigation')[0];
    return [{url: location.href, bytes: page.decodedBodySize}]
        .concat(entries.map(e => ({url: e.name, bytes: e.decodedBodySize})));
}"""


def breakdown(resources: list[dict], base: str, top: int = 15) -> str:
    """The largest resources, one a line: KB and address under the site."""
    ordered = sorted(resources, key=lambda r: -r["bytes"])
    lines = [f"{r['bytes'] / 1000:9.1f} KB  {r['url'].removeprefix(base).split('?')[0]}"
             for r in ordered[:top]]
    if len(ordered) > top:
        rest = ordered[top:]
        lines.append(f"{sum(r['bytes'] for r in rest) / 1000:9.1f} KB  ({len(rest)} more)")
    return "\n  ".join(lines)


def first_view(browser, base: str, page_name: str) -> tuple[list[dict], list[str]]:  # noqa: F811
    """(every response of the page's first view with its decoded bytes, what failed to load).

    tests/test_browser.py's ``Visit`` as far as the weight goes, but it lets the browser fetch the
    book's own files without handing each request to Python first (a second a page here): only a
    request to outside the book is stopped (and reported), as a reader offline would see it fail."""
    context = browser.new_context(viewport=DESKTOP)
    failed: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        context.route(re.compile("^(?!" + re.escape(base) + ")"), lambda route: route.abort())
        page.on("requestfailed", lambda request: failed.append(f"{request.url} ({request.failure})"))
        page.on("response", lambda response: failed.append(f"{response.url} (HTTP {response.status})")
                if response.status >= 400 else None)
        page.goto(base + page_name + ".html", wait_until="load")
        page.evaluate(_WAIT_FOR_MATHJAX)
        return page.evaluate(_FIRST_VIEW), failed
    finally:
        context.close()


@pytest.mark.parametrize("book", list(BOOKS))
@pytest.mark.parametrize("page_name", CHAPTER_PAGES)
def test_first_view_is_light(page_name, book, site, browser):  # noqa: F811 - fixtures imported above
    base, html = site
    if book != "en" and not (html / book).is_dir():
        pytest.skip(f"no {book} book (the Chinese books are built with the book's own toc only)")
    resources, failed = first_view(browser, base, BOOKS[book] + page_name)
    total = sum(r["bytes"] for r in resources)
    assert not failed, f"{book}/{page_name}: failed to load {failed}"
    assert total <= MAX_BYTES, (
        f"{book}/{page_name}: the first view loads {total / 1e6:.2f} MB decoded ({len(resources)} "
        f"responses), more than {MAX_BYTES / 1e6:.1f} MB:\n  {breakdown(resources, base)}")
