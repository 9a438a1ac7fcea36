"""The documentation site: `mkdocs build --strict` as CI runs it, then every page opened in one real
headless Chromium with the network off (a network namespace of its own, holding only the
loopback server of the site): each page renders without an error and loads nothing from
elsewhere, and every internal link leads to a page or file that exists, at an anchor the
rendered page has."""
import functools
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from cdp import CHROMIUM, OFFLINE, Browser, BrowserError
from helpers import ROOT, wait_until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec('mkdocs') is None or importlib.util.find_spec('material') is None,
                       reason="mkdocs and mkdocs-material are not installed (pip install -e '.[docs]')"),
    pytest.mark.skipif(CHROMIUM is None, reason='no chromium on this machine (.ci/run installs it)'),
]

PORT = 8000                 # in a network namespace of its own, nothing else listens
# What the page script reports: the article's heading, whether the theme styled the page, every id, every link as the
# browser resolved it, and every resource the page loaded.
PAGE_FACTS = """(() => {
  const article = document.querySelector('article');
  const h1 = article && article.querySelector('h1');
  const header = document.querySelector('header');
  return {title: document.title, h1: h1 ? h1.textContent : null,
          styled: !!header && getComputedStyle(header).position === 'sticky',   // the theme's CSS applied
          ids: [...document.querySelectorAll('[id]')].map(e => e.id),
          links: [...document.querySelectorAll('a[href]')].map(a => a.href),
          resources: performance.getEntriesByType('resource').map(e => e.name)};
})()"""


def _build(config, site):
    return subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--strict', '-f', str(config), '-d', str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, 'NO_MKDOCS_2_WARNING': '1'})


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    site = tmp_path_factory.mktemp('docs') / 'site'
    proc = _build(ROOT / 'mkdocs.yml', site)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return site


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope='module')
def browser(site):
    """(a Browser on the site, its base URL). As root: the browser and a static server of the site
    in a network namespace with only loopback up; else the server on this machine's loopback."""
    if OFFLINE and shutil.which('ip'):
        server = f'{shlex.quote(sys.executable)} -m http.server --bind 127.0.0.1 --directory {shlex.quote(str(site))} {PORT}'
        script = f'ip link set lo up && {{ {server} >/dev/null 2>&1 & }} && served=$! && "$@"; status=$?; kill $served; exit $status'
        command = lambda argv: ['unshare', '--net', '--pid', '--fork', 'sh', '-c', script, 'sh', *argv]  # noqa: E731
        base, httpd = f'http://127.0.0.1:{PORT}/', None
    else:
        httpd = ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        command, base = None, f'http://127.0.0.1:{httpd.server_address[1]}/'
    try:
        with Browser(command=command) as b:
            assert wait_until(lambda: _opens(b, base + 'index.html'), timeout=20), 'the site was never served'
            yield b, base
    finally:
        if httpd:
            httpd.shutdown()


def _opens(browser, url):
    try:
        browser.open(url)
        return True
    except BrowserError as exc:
        if 'ERR_CONNECTION_REFUSED' in str(exc):
            return False
        raise


def visit(browser, base, site, names):
    """{page name: its facts and the errors it raised} for each page, opened in turn."""
    out = {}
    for name in names:
        browser.open(base + name)
        facts = browser.evaluate(PAGE_FACTS)
        facts['errors'] = browser.errors()
        out[name] = facts
    return out


def render_problems(name, facts, base):
    problems = [f'{name}: {error}' for error in facts['errors']]
    if not (facts['title'] and facts['h1'] and facts['styled']):
        problems.append(f'{name}: no page rendered (title {facts["title"]!r}, heading {facts["h1"]!r}, '
                        f'styled {facts["styled"]})')
    problems += [f'{name}: loaded {url} from elsewhere' for url in facts['resources'] if not url.startswith(base)]
    return problems


def link_problems(name, facts, pages, base, site):
    """Internal links of page `name` that lead nowhere: a missing file, or an anchor the rendered
    target page does not have. `pages`: the facts of every page visited."""
    problems = []
    for link in facts['links']:
        if not link.startswith(base):
            continue            # another site: not ours to check, and the network is off
        parts = urlsplit(link)
        target = unquote(parts.path[len(urlsplit(base).path):]) or 'index.html'
        if target.endswith('/'):
            target += 'index.html'
        if not (site / target).is_file():
            problems.append(f'{name}: {link} leads to no file')
        elif parts.fragment and target.endswith('.html'):
            if target not in pages:
                raise AssertionError(f'{name} links to {target}, a page that was not visited')
            if unquote(parts.fragment) not in pages[target]['ids']:
                problems.append(f'{name}: {link}: {target} has no anchor #{unquote(parts.fragment)}')
    return problems


def test_every_page_renders_offline_and_every_internal_link_and_anchor_exists(browser, site):
    b, base = browser
    names = sorted(str(p.relative_to(site)) for p in site.rglob('*.html'))
    assert {'index.html', 'reference/config.html', 'reference/commands.html', 'reference/exit-codes.html',
            'reference/results-file.html', 'glossary.html', 'benchmarks.html'} <= set(names)
    pages = visit(b, base, site, names)
    problems = [p for name in names for p in render_problems(name, pages[name], base)]
    problems += [p for name in names for p in link_problems(name, pages[name], pages, base, site)]
    assert problems == []
    # the generated reference holds what the code defines
    assert 'split' in pages['reference/config.html']['ids'] or 'scicodedataset' in pages['reference/config.html']['ids']
    assert sum(len(f['links']) for f in pages.values()) > 500


def test_the_checks_reject_a_broken_link_a_missing_anchor_and_a_blank_page(browser, site):
    b, base = browser
    index = (site / 'index.html').read_text()
    bad = index.replace('</article>', '<a href="guide/configs.html#no-such-heading">x</a>'
                                      '<a href="no-such-page.html">y</a></article>', 1)
    assert bad != index
    (site / 'broken-links.html').write_text(bad)
    (site / 'blank.html').write_text('<!doctype html><html><head></head><body></body></html>')
    try:
        pages = visit(b, base, site, ['guide/configs.html', 'broken-links.html', 'blank.html'])
        problems = link_problems('broken-links.html', pages['broken-links.html'], pages, base, site)
    finally:
        (site / 'broken-links.html').unlink()
        (site / 'blank.html').unlink()
    assert problems == [f'broken-links.html: {base}guide/configs.html#no-such-heading: guide/configs.html has no '
                        f'anchor #no-such-heading', f'broken-links.html: {base}no-such-page.html leads to no file']
    assert render_problems('broken-links.html', pages['broken-links.html'], base) == []
    assert render_problems('blank.html', pages['blank.html'], base) != []


def test_the_strict_build_fails_on_a_broken_anchor_and_on_a_page_left_out_of_the_navigation(tmp_path):
    docs = tmp_path / 'docs'
    shutil.copytree(ROOT / 'docs', docs)
    (docs / 'orphan.md').write_text('# Orphan\n\nIn no navigation.\n')
    with open(docs / 'glossary.md', 'a') as fh:
        fh.write('\n[a broken anchor](guide/configs.md#no-such-heading)\n')
    config = yaml.safe_load((ROOT / 'mkdocs.yml').read_text())
    config.update(docs_dir=str(docs), hooks=[str(ROOT / h) for h in config['hooks']])
    (tmp_path / 'mkdocs.yml').write_text(yaml.safe_dump(config))
    proc = _build(tmp_path / 'mkdocs.yml', tmp_path / 'site')
    assert proc.returncode != 0
    assert "'guide/configs.md' does not contain an anchor '#no-such-heading'" in proc.stderr
    assert 'orphan.md' in proc.stderr
