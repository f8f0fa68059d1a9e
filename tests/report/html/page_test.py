#!/usr/bin/env python3
"""The HTML report page (src/report/html/page.*) in headless Chromium, on sample pages.

Builds pages with make_sample_page.py, loads each in a tab of one headless Chromium (browser.py's
Chromium, over the DevTools pipe), and checks against values computed here from the JSON:
the page decodes its data (gzip-base64 and plain json), draws the icicle and the timeline,
marks 'lowalloc-first-picture', answers window.lowalloc's calls (search totals, folding, the
thread filter, callers/callees, site sorting) with the right numbers, shows a tooltip, and logs
no console error or warning and makes no network request; a page with undecodable data shows
#error and logs nothing. With --big N it also times the first picture and the view switches on
a tree of N nodes.

  page_test.py [--chromium /usr/bin/chromium] [--big 300000] [--keep DIR]
Exit status 0: passed, 1: failed, 2: the browser did not answer, 77: chromium missing (skipped).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_sample_page as sample  # noqa: E402
from browser import (BrowserError, Chromium, PageError, collect_failures,  # noqa: E402
                     find_chromium)

NM = 5
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print('FAIL: ' + what)
    return cond


# ---- an independent model of what the page must show ----------------------------------------
class Model:
    def __init__(self, doc):
        self.doc = doc
        self.strings = doc['strings']
        S, F = doc['strings'], doc['frames']
        self.name = [S[f[0]] or S[f[3]] for f in F]
        self.flags = [f[4] for f in F]
        t = doc['tree']
        self.parent, self.frame, self.self = t['parent'], t['frame'], t['self']

    def view(self, fold, thread=-1):
        """(parent, frame, inclusive values) of the shown tree."""
        n = len(self.parent)
        selfv = self.self
        if thread >= 0:
            th = self.doc['threads'][thread]['self']
            selfv = [0] * (n * NM)
            for j, node in enumerate(th['nodes']):
                for k in range(NM):
                    selfv[node * NM + k] += th['values'][j * NM + k]
        if fold:
            newid, par, fr, keys = [0] * n, [0], [self.frame[0]], {}
            for i in range(1, n):
                p, f = newid[self.parent[i]], self.frame[i]
                if self.flags[f] & 1:
                    newid[i] = p
                    continue
                if (p, f) not in keys:
                    keys[(p, f)] = len(par)
                    par.append(p)
                    fr.append(f)
                newid[i] = keys[(p, f)]
        else:
            newid, par, fr = list(range(n)), list(self.parent), list(self.frame)
        tot = [0] * (len(par) * NM)
        for i in range(n):
            for k in range(NM):
                tot[newid[i] * NM + k] += selfv[i * NM + k]
        for i in range(len(par) - 1, 0, -1):
            for k in range(NM):
                tot[par[i] * NM + k] += tot[i * NM + k]
        return par, fr, tot

    def search(self, text, metric, fold, thread=-1):
        par, fr, tot = self.view(fold, thread)
        hit = [text.lower() in self.name[f].lower() and i > 0 for i, f in enumerate(fr)]
        matches = sum(1 for i in range(len(par)) if hit[i] and tot[i * NM + metric] > 0)
        value = 0
        for i in range(1, len(par)):
            if hit[i]:
                a, outer = par[i], False
                while a != 0:
                    outer = outer or hit[a]
                    a = par[a]
                if not outer:
                    value += tot[i * NM + metric]
        return matches, value, tot[metric]

    def site_function(self, i):
        f = self.doc['sites'][i]['function']
        return self.strings[f] if isinstance(f, int) else f

    @staticmethod
    def size_groups(rows):
        """The chart's rows: sizes grouped by powers of two, from 8 up."""
        return sorted({max(3, (int(label.split('..')[-1]) - 1).bit_length()) for label, _ in rows})

    def callers(self, fn, fold):
        par, fr, tot = self.view(fold)
        callers, callees = set(), set()
        for i in range(1, len(par)):
            if self.name[fr[i]] != fn:
                continue
            callers.add('(top of the stack)' if par[i] == 0 else self.name[fr[par[i]]])
        for i in range(1, len(par)):
            if self.name[fr[par[i]]] == fn and par[i] != 0:
                callees.add(self.name[fr[i]])
        return len(callers), len(callees)

    def self_allocations(self, fn):
        """The allocations that end in fn's frames (folded view)."""
        par, fr, tot = self.view(True)
        inner = [0] * len(par)
        for i in range(1, len(par)):
            inner[par[i]] += tot[i * NM]
        return sum(tot[i * NM] - inner[i] for i in range(1, len(par)) if self.name[fr[i]] == fn)


# ---- the checks -------------------------------------------------------------------------------
def complaints(br, path):
    """The page's console errors and warnings, exceptions, browser log errors and warnings, and
    requests of anything but its own file and data: URLs, since br.open_page() loaded it."""
    return collect_failures(br.page_events(), 'file://' + path, log_levels=('error', 'warning'),
                            allowed=('data:',))


def static_checks():
    page_dir = sample.PAGE_DIR
    html = open(os.path.join(page_dir, 'page.html'), encoding='utf-8').read()
    lines = [l.strip() for l in html.split('\n')]
    for marker in ('/*LOWALLOC_CSS*/', '/*LOWALLOC_JS*/', '<!--LOWALLOC_DATA-->'):
        check(lines.count(marker) == 1 and html.count(marker) == 1,
              'page.html holds %s exactly once, alone on its line' % marker)
    import re
    for name in ('page.html', 'page.css', 'page.js'):
        text = open(os.path.join(page_dir, name), encoding='utf-8').read()
        check(not re.search(r'https?://|//[a-z0-9.-]+\.[a-z]{2,}/', text, re.I),
              name + ' names no URL')
        check(not re.search(r'''(src|href)\s*=\s*["'](?!data:|#)''', text, re.I),
              name + ' loads nothing (src/href are data: or #)')
        check(not re.search(r'@import|url\((?!data:)|\bimport\s*\(|\bfetch\s*\(|XMLHttpRequest',
                            text),
              name + ' imports and fetches nothing')


def page_checks(br, path, model, fold_default=True):
    br.open_page('file://' + path)
    ok = br.evaluate('window.lowalloc.ready.then(() => document.documentElement.dataset.ready)')
    check(ok == '1', path + ': ready and data-ready="1"')
    mark = br.evaluate("performance.getEntriesByName('lowalloc-first-picture').length")
    check(mark == 1, path + ': one lowalloc-first-picture mark')
    st = br.evaluate('lowalloc.stats()')
    check(st['nodesDrawn'] > 0 and st['canvasPixelsNonBlank'],
          path + ': the icicle is drawn %s' % st)
    blank = br.evaluate('''(() => { const c = document.getElementById('timeline-canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; })()''')
    check(blank > 1000, path + ': the timeline is drawn (%d pixels)' % blank)
    check(br.evaluate("document.getElementById('error').hidden") is True, path + ': #error hidden')
    doc = model.doc
    rows = br.evaluate("document.querySelectorAll('#sites-table tbody tr').length")
    check(rows == len(doc['sites']),
          path + ': one table row per site (%s, %d)' % (rows, len(doc['sites'])))
    bars = br.evaluate("document.querySelectorAll('#sizes-chart .bar').length")
    check(bars == len(model.size_groups(doc['sizes'])), path + ': one size bar per power of two')
    counts = br.evaluate("[...document.querySelectorAll('#sizes-chart .cnt')]"
                         ".map(e => e.textContent)")
    check(counts and
          sum(int(c.replace(',', '')) for c in counts) == sum(c for _, c in doc['sizes']),
          path + ': the size bars count every allocation')
    pruned = br.evaluate("document.getElementById('pruned').textContent")
    check(pruned == '%d call-tree nodes under 0.01%% of every metric are merged into their callers.'
          % doc['pruned']['nodes'], path + ': the pruning note: %r' % pruned)
    summary = br.evaluate("document.getElementById('summary-text').textContent")
    check(summary == doc['summary_text'], path + ': the summary text')
    # search: every metric, folded and not
    for fold in (True, False):
        br.evaluate('lowalloc.setFold(%s)' % ('true' if fold else 'false'))
        for m, name in enumerate(doc['metrics']):
            br.evaluate('lowalloc.setMetric(%s)' % json.dumps(name))
            for text in ('app::run', 'lookup', 'operator new'):
                got = br.evaluate('lowalloc.search(%s)' % json.dumps(text))
                matches, value, total = model.search(text, m, fold)
                check(got['matches'] == matches and got['value'] == value and
                      abs(got['share'] - (value / total if total else 0)) < 1e-12,
                      '%s: search %r fold=%s metric=%s: %s, expected %d matches, value %d'
                      % (path, text, fold, name, got, matches, value))
        if fold:
            want = model.search('operator new', 0, True)[0]
            check(want == 0, 'folded: operator new is hidden (%d)' % want)
    br.evaluate("lowalloc.setMetric('allocations'); lowalloc.setFold(true)")
    shown = br.evaluate("document.getElementById('search-result').textContent")
    m0, v0, t0 = model.search('operator new', 0, True)
    check(shown.startswith('%d matches' % m0), path + ': #search-result says %r' % shown)
    # threads
    nthreads = len(doc['threads'])
    check(br.evaluate("document.getElementById('thread-label').hidden") is (nthreads == 0),
          path + ': the thread filter is shown only with threads')
    for th in range(nthreads):
        got = br.evaluate('lowalloc.setThread(%d); lowalloc.search("lookup")' % th)
        matches, value, _ = model.search('lookup', 0, True, th)
        check(got['matches'] == matches and got['value'] == value,
              '%s: thread %d search: %s, expected %d, %d' % (path, th, got, matches, value))
    br.evaluate('lowalloc.setThread(-1)')
    # callers and callees
    for fn in ('app::run', 'main', model.site_function(0)):
        got = br.evaluate('lowalloc.select(%s)' % json.dumps(fn))
        want = model.callers(fn, True)
        check((got['callers'], got['callees']) == want,
              '%s: select(%r) = %s, expected %s' % (path, fn, got, want))
        rows = br.evaluate("document.querySelectorAll('#callers-table tbody tr').length")
        check(rows == want[0], '%s: %d caller rows for %r' % (path, rows, fn))
        itself = br.evaluate('''(() => {
            const r = [...document.querySelectorAll('#callees-table tbody tr')]
              .find(tr => tr.dataset.fn === '(itself)');
            return r ? r.cells[1].textContent : '0'; })()''')
        want_self = model.self_allocations(fn)
        check(int(itself.replace(',', '')) == want_self,
              '%s: %r allocates %s itself, expected %d' % (path, fn, itself, want_self))
    # sorting
    sites = doc['sites']
    fns = [model.site_function(i) for i in range(len(sites))]
    for col, key in (('bytes', 'bytes'), ('leaked', 'leaked_bytes'), ('temporary', 'temporary')):
        best = max(range(len(sites)), key=lambda i: (sites[i][key], -i))
        got = br.evaluate('lowalloc.sortSites(%s, true)' % json.dumps(col))
        check(got == fns[best],
              '%s: sortSites(%s) -> %r, expected %r' % (path, col, got, fns[best]))
        first = br.evaluate("document.querySelector('#sites-table tbody tr td')"
                            ".firstChild.textContent")
        check(first == got, path + ': the table shows the sorted first row')
    low = min(range(len(sites)), key=lambda i: (sites[i]['allocations'], i))
    check(br.evaluate("lowalloc.sortSites('allocations', false)") == fns[low],
          path + ': sortSites ascending')
    # a click on a site row shows its histogram
    br.evaluate("document.querySelector('#sites-table tbody tr').click()")
    bars = br.evaluate("document.querySelectorAll('#sizes-chart .bar').length")
    check(bars == len(model.size_groups(sites[low]['sizes'])),
          path + ': the selected site\'s histogram')
    # the tooltip over the root bar, then a zoom by click
    tip = br.evaluate('''(() => { const c = document.getElementById('flame-canvas');
        const r = c.getBoundingClientRect();
        c.dispatchEvent(new MouseEvent('mousemove',
                                       {clientX: r.left + 50, clientY: r.top + 5, bubbles: true}));
        const t = document.getElementById('tooltip'); return t.hidden ? '' : t.textContent; })()''')
    check(tip.startswith('all') and '% of total' in tip,
          path + ': the tooltip of the root: %r' % tip[:80])
    errors = complaints(br, path)
    check(not errors, path + ': no console error, warning, exception or request: %s' % errors[:5])


def timing_checks(br, path, first_limit_ms, switch_limit_ms):
    br.open_page('file://' + path)
    br.evaluate('window.lowalloc.ready')
    first = br.evaluate("performance.getEntriesByName('lowalloc-first-picture')[0].startTime")
    times = br.evaluate('''(() => { const out = {}; const L = window.lowalloc;
        const time = (k, f) => {
          const t = performance.now(); f(); out[k] = performance.now() - t; };
        time('setMetric bytes', () => L.setMetric('bytes'));
        time('setFold false', () => L.setFold(false));
        time('setFold true', () => L.setFold(true));
        time('setFold false again', () => L.setFold(false));
        time('setMetric peak', () => L.setMetric('peak'));
        time('search', () => L.search('lookup'));
        time('setThread 0', () => L.setThread(0));
        time('setThread -1', () => L.setThread(-1));
        time('search clear', () => L.search(''));
        return out; })()''')
    nodes = br.evaluate('lowalloc.data.tree.parent.length')
    print('%s: %d nodes, %d bytes, first picture %.0f ms' % (path, nodes, os.path.getsize(path),
                                                             first))
    for k, v in times.items():
        print('  %-20s %.1f ms' % (k, v))
    check(first <= first_limit_ms, 'first picture %.0f ms <= %d ms' % (first, first_limit_ms))
    for k, v in times.items():
        check(v < switch_limit_ms, '%s %.1f ms < %d ms' % (k, v, switch_limit_ms))
    errors = complaints(br, path)
    check(not errors, path + ': no console error: %s' % errors[:5])


def error_checks(br, path):
    br.open_page('file://' + path)
    br.evaluate('window.lowalloc.ready.then(() => "resolved", () => "rejected")')
    err = br.evaluate("(() => { const e = document.getElementById('error');"
                      " return e.hidden ? '' : e.textContent; })()")
    check(err.startswith("lowalloc: the report's data cannot be decoded: ") and err.endswith('.'),
          path + ': #error shows %r' % err)
    check(br.evaluate("document.documentElement.dataset.ready || ''") == '', path + ': not ready')
    errors = complaints(br, path)
    check(not errors, path + ': the bad page logs nothing: %s' % errors[:5])


def empty_checks(br, path):
    """A trace without allocations: the page is ready, draws the root, and logs nothing."""
    br.open_page('file://' + path)
    check(br.evaluate('window.lowalloc.ready.then(() => document.documentElement.dataset.ready)')
          == '1',
          path + ': ready')
    st = br.evaluate('lowalloc.stats()')
    check(st['nodesDrawn'] == 1 and st['canvasPixelsNonBlank'],
          path + ': the root alone is drawn: %s' % st)
    got = br.evaluate("lowalloc.setMetric('bytes'); lowalloc.setFold(false);"
                      " lowalloc.search('main')")
    check(got == {'matches': 0, 'value': 0, 'share': 0},
          path + ': an empty search result: %s' % got)
    check(br.evaluate("lowalloc.sortSites('bytes', true)") is None, path + ': no site to sort')
    errors = complaints(br, path)
    check(not errors, path + ': no console error: %s' % errors[:5])


EMPTY = {'version': 1, 'title': 'lowalloc report: empty', 'command': 'true', 'summary_text': '',
         'totals': {'allocations': 0, 'bytes': 0, 'frees': 0, 'temporary': 0,
                    'leaked_allocations': 0,
                    'leaked_bytes': 0, 'peak_bytes': 0, 'run_time_seconds': 0, 'threads': 1},
         'metrics': ['allocations', 'bytes', 'temporary', 'leaked', 'peak'], 'strings': ['', 'all'],
         'frames': [[1, 0, 0, 0, 0]],
         'tree': {'parent': [0], 'frame': [0], 'self': [0, 0, 0, 0, 0]},
         'pruned': {'share': 0.0001, 'nodes': 0, 'self': [0, 0, 0, 0, 0]},
         'timeline': {'t': [], 'live': [], 'allocs_per_s': [], 'peak': {'t': 0, 'bytes': 0}},
         'sizes': [], 'sites': [], 'threads': [],
         'process': {'pid': 1, 'fork_child': False, 'exec_child': False, 'exe': '/bin/true'},
         'notes': []}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--chromium', help='the browser (default: $LOWALLOC_CHROMIUM, or chromium on'
                    ' PATH)')
    ap.add_argument('--big', type=int, default=0, help='also time a page of this many tree nodes')
    ap.add_argument('--first-limit-ms', type=int, default=1500)
    ap.add_argument('--switch-limit-ms', type=int, default=100)
    ap.add_argument('--keep', help='write the pages here and keep them')
    a = ap.parse_args()
    static_checks()
    chromium = find_chromium(a.chromium)
    if not chromium:
        print('chromium not found: the browser checks are skipped')
        return 1 if FAILURES else 77
    work = os.path.abspath(a.keep or tempfile.mkdtemp(prefix='lowalloc-page-'))
    os.makedirs(work, exist_ok=True)
    pages = {}

    def make(name, doc, plain=False, corrupt=None):
        p = os.path.join(work, name)
        with open(p, 'w', encoding='utf-8') as f:
            f.write(sample.assemble(sample.data_element(doc, plain, corrupt)))
        pages[name] = p
        return p

    threaded = sample.generate(2500, 3, 17)
    single = sample.generate(800, 0, 5, site_names_by_index=False)
    make('threads.html', threaded)
    make('single-plain.html', single, plain=True)
    for how in ('base64', 'gzip', 'truncated'):
        make('corrupt-%s.html' % how, single, corrupt=how)
    make('empty.html', EMPTY)
    br = Chromium(chromium, 1400, 1200)

    def run(checks, path, *args):
        """checks(br, path, ...); an expression that throws in the page fails this page only."""
        try:
            checks(br, path, *args)
        except PageError as error:
            check(False, '%s: evaluating in the page threw: %s' % (path, error))

    try:
        run(page_checks, pages['threads.html'], Model(threaded))
        run(page_checks, pages['single-plain.html'], Model(single))
        for how in ('base64', 'gzip', 'truncated'):
            run(error_checks, pages['corrupt-%s.html' % how])
        run(empty_checks, pages['empty.html'])
        if a.big:
            make('big.html', sample.generate(a.big, 4, 3))
            run(timing_checks, pages['big.html'], a.first_limit_ms, a.switch_limit_ms)
    except BrowserError as error:
        print('page_test.py: %s\n--- browser output ---\n%s' % (error, br.browser_log()),
              file=sys.stderr)
        return 2
    finally:
        br.close()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if FAILURES:
        print('%d checks failed' % len(FAILURES))
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
