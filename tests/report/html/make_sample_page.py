#!/usr/bin/env python3
"""Builds a sample HTML report page without the C++ writer.

It fills src/report/html/page.html's three markers with page.css, page.js and a data element
made from a generated sample JSON (data format version 1), so the page can be developed and
tested on its own, at any size (--nodes 300000 for performance work).

  make_sample_page.py OUT.html [--nodes N] [--threads K] [--seed S] [--plain]
                               [--json FILE] [--write-json FILE] [--corrupt HOW] [--extra-js FILE]

--json FILE     wrap this JSON instead of generating one
--write-json F  also write the generated JSON to F
--plain         data-encoding="json" (as LOWALLOC_HTML_PLAIN=1 makes the writer do)
--corrupt HOW   a data element that does not decode (base64, gzip or truncated):
                the page must show #error
--extra-js F    append F's script after the page's script (test drivers)
"""
import argparse
import base64
import gzip
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE_DIR = os.path.normpath(os.path.join(HERE, '..', '..', '..', 'src', 'report', 'html'))

NM = 5  # allocations, bytes, temporary, leaked, peak



def size_label(size):
    """The writer's bucket label: the exact size up to 4096, then a power-of-two range."""
    if size <= 4096:
        return str(size)
    hi = 1 << (size - 1).bit_length()
    return '%d..%d' % (hi // 2 + 1, hi)


def label_key(label):
    return int(label.split('..')[-1])

WORDS = ['parse', 'load', 'build', 'render', 'scan', 'emit', 'visit', 'lower', 'split', 'merge',
         'hash', 'index', 'encode', 'decode', 'resolve', 'collect', 'update', 'flush', 'read',
         'write', 'compile', 'check', 'match', 'sort', 'insert', 'lookup', 'format', 'print']
NOUNS = ['Token', 'Node', 'Module', 'Symbol', 'Buffer', 'Table', 'Entry', 'Graph', 'Block',
         'Record', 'String', 'Value', 'Scope', 'Type', 'Config', 'Request', 'Row', 'Path']
NS = ['app', 'core', 'io', 'net', 'ir', 'util', 'db', 'ui']

ALLOC_CHAINS = [
    ['std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>',
     'std::allocator<int>::allocate', 'operator new(unsigned long)', 'malloc'],
    ['std::__cxx11::basic_string<char>::_M_create', 'operator new(unsigned long)', 'malloc'],
    ['std::_Hashtable<std::string, std::pair<std::string const, int> >::_M_insert_unique_node',
     'std::__detail::_Hashtable_alloc::_M_allocate_buckets', 'operator new(unsigned long)', 'malloc'],
    ['std::make_shared<app::Node>', 'operator new(unsigned long)', 'malloc'],
    ['operator new(unsigned long)', 'malloc'],
    ['malloc'],
    ['std::map<int, app::Entry>::operator[]', 'std::_Rb_tree::_M_create_node',
     'operator new(unsigned long)', 'malloc'],
]


class Builder:
    def __init__(self):
        self.strings = ['']
        self.sidx = {'': 0}
        self.frames = [[self.s('all'), 0, 0, 0, 0]]
        self.fidx = {}

    def s(self, text):
        i = self.sidx.get(text)
        if i is None:
            i = len(self.strings)
            self.strings.append(text)
            self.sidx[text] = i
        return i

    def frame(self, fn, file, line, module, flags):
        key = (fn, file, line, module, flags)
        i = self.fidx.get(key)
        if i is None:
            i = len(self.frames)
            self.frames.append([self.s(fn), self.s(file), line, self.s(module), flags])
            self.fidx[key] = i
        return i


def generate(nodes, threads, seed, site_names_by_index=True):
    """A report's JSON: N call-tree nodes, K threads (0: single-threaded); sites name their
    function and file by index into strings (as the writer does) or by string."""
    rnd = random.Random(seed)
    b = Builder()
    app = '/usr/local/bin/sample_app'
    libc = '/usr/lib/x86_64-linux-gnu/libc.so.6'
    libstd = '/usr/lib/x86_64-linux-gnu/libstdc++.so.6'
    start = [b.frame('_start', '', 0, app, 4), b.frame('__libc_start_main', '', 0, libc, 4),
             b.frame('main', '/src/app/main.cpp', 12, app, 0)]
    # the program's functions, each with a few callees
    nfun = max(30, min(6000, nodes // 40))
    funs = []
    for i in range(nfun):
        name = '%s::%s%s' % (rnd.choice(NS), rnd.choice(WORDS), rnd.choice(NOUNS))
        if i >= len(WORDS) * 2:
            name += '_%d' % i
        if i == 0:
            name = 'app::run'
        inl = 2 if rnd.random() < 0.08 else 0
        fil = '/src/%s/%s.cpp' % (name.split('::')[0], name.split('::')[1].lower())
        funs.append(b.frame(name, fil, rnd.randint(5, 900), app, inl))
    callees = [[rnd.randrange(nfun) for _ in range(rnd.randint(1, 5))] for _ in range(nfun)]
    chains = [[b.frame(fn, '/usr/include/c++/12/bits/alloc.h' if fn != 'malloc' else '', 0,
                       libc if fn == 'malloc' else libstd, 1) for fn in ch] for ch in ALLOC_CHAINS]

    parent, frame = [0], [0]
    child = {}
    selfv = [[0] * NM]
    thread_self = [dict() for _ in range(threads)]
    sites = {}
    ends = []

    def node(p, f):
        k = (p, f)
        i = child.get(k)
        if i is None:
            i = len(parent)
            parent.append(p)
            frame.append(f)
            selfv.append([0] * NM)
            child[k] = i
        return i

    while len(parent) < nodes:
        path = list(start)
        cur = 0
        depth = rnd.randint(2, 28)
        for _ in range(depth):
            path.append(funs[cur])
            cur = rnd.choice(callees[cur])
        user_end = path[-1]
        path += rnd.choice(chains)
        n = 0
        for f in path:
            n = node(n, f)
        allocs = max(1, int(rnd.paretovariate(1.2) * 3))
        size = rnd.choice([8, 16, 24, 32, 48, 64, 100, 256, 1024, 4096, 5000, 65536, 3 << 20])
        byt = allocs * size
        temp = int(allocs * rnd.random() * 0.9)
        leaked = byt // 3 if rnd.random() < 0.04 else 0
        peak = int(byt * rnd.random() * 0.5)
        vals = [allocs, byt, temp, leaked, peak]
        sv = selfv[n]
        for k in range(NM):
            sv[k] += vals[k]
        if threads:
            th = rnd.randrange(threads)
            tv = thread_self[th].setdefault(n, [0] * NM)
            for k in range(NM):
                tv[k] += vals[k]
        s = sites.setdefault(user_end, {'vals': [0] * NM, 'nodes': set(), 'sizes': {}, 'max_live': 0})
        for k in range(NM):
            s['vals'][k] += vals[k]
        s['nodes'].add(n)
        bucket = size_label(size)
        s['sizes'][bucket] = s['sizes'].get(bucket, 0) + allocs
        s['max_live'] = max(s['max_live'], peak + size)
        ends.append(n)

    tot = [sum(v[k] for v in selfv) for k in range(NM)]
    strings, frames = b.strings, b.frames

    site_list = []
    order = sorted(sites.items(), key=lambda kv: -kv[1]['vals'][0])[:500]
    advice = ['reserve the vector before the loop (growth by push_back)',
              'use lowalloc::small_vector<T, 8>: 94% of these vectors hold at most 8 elements',
              'use lowalloc::small_string<32>: most strings are short', '']
    for i, (f, s) in enumerate(order):
        fr = frames[f]
        site_list.append({
            'id': i, 'function': fr[0] if site_names_by_index else strings[fr[0]],
            'file': fr[1] if site_names_by_index else strings[fr[1]], 'line': fr[2],
            'op': rnd.choice(['via std::vector<int>::push_back (growth)', '', 'via std::string (construct)']),
            'allocations': s['vals'][0], 'bytes': s['vals'][1], 'temporary': s['vals'][2],
            'leaked_bytes': s['vals'][3], 'peak_bytes': s['vals'][4], 'max_live_bytes': s['max_live'],
            'sizes': [[k, c] for k, c in sorted(s['sizes'].items(), key=lambda kv: label_key(kv[0]))],
            'advice': advice[i % len(advice)], 'nodes': sorted(s['nodes'])})
    sizes = {}
    for s in sites.values():
        for k, c in s['sizes'].items():
            sizes[k] = sizes.get(k, 0) + c

    npts = 2000 if nodes > 5000 else 400
    run = 3.5
    t, live, live_max, rate = [], [], [], []
    peak_i = 0
    for i in range(npts):
        x = (i + 1) / npts
        base = (1 - (1 - x) ** 3) * 0.6 if x < 0.55 else 0.6 - (x - 0.55) * 0.5 + 0.25 * x
        noise = rnd.random() * 0.05
        v = int(tot[4] * 1.2 * (base + noise) + 1)
        t.append(round(run * x, 6))
        live.append(v)
        live_max.append(int(v * (1 + rnd.random() * 0.04)))
        rate.append(int(tot[0] / run * (0.5 + rnd.random() + (1.5 if 0.3 < x < 0.4 else 0))))
        if live_max[i] > live_max[peak_i]:
            peak_i = i
    thread_list = []
    for th in range(threads):
        ns = sorted(thread_self[th])
        vals = [v for n in ns for v in thread_self[th][n]]
        thread_list.append({'index': th, 'tid': 4100 + th,
                            'allocations': sum(thread_self[th][n][0] for n in ns),
                            'bytes': sum(thread_self[th][n][1] for n in ns),
                            'self': {'nodes': ns, 'values': vals}})
    leaked_blocks = min(tot[0], tot[3] // 4096)
    summary = ('lowalloc report: sample.lowalloc\n'
               '%d allocations, %d bytes, %d temporary, %d bytes leaked, peak %d bytes\n' %
               (tot[0], tot[1], tot[2], tot[3], live_max[peak_i]))
    return {
        'version': 1,
        'title': 'lowalloc report: sample.lowalloc',
        'command': '/usr/local/bin/sample_app --input data.txt --jobs %d' % max(1, threads),
        'summary_text': summary,
        'totals': {'allocations': tot[0], 'bytes': tot[1], 'frees': tot[0] - leaked_blocks,
                   'temporary': tot[2], 'leaked_allocations': leaked_blocks, 'leaked_bytes': tot[3],
                   'peak_bytes': live_max[peak_i], 'run_time_seconds': run, 'threads': max(1, threads)},
        'metrics': ['allocations', 'bytes', 'temporary', 'leaked', 'peak'],
        'strings': strings,
        'frames': frames,
        'tree': {'parent': parent, 'frame': frame, 'self': [v for sv in selfv for v in sv]},
        'pruned': {'share': 0.0001, 'nodes': nodes // 10, 'self': [0] * NM},
        'timeline': {'t': t, 'live': live, 'live_max': live_max, 'allocs_per_s': rate,
                     'peak': {'t': t[peak_i], 'bytes': live_max[peak_i]}},
        'sizes': [[k, sizes[k]] for k in sorted(sizes, key=label_key)],
        'sites': site_list,
        'threads': thread_list,
        'process': {'pid': 4242, 'fork_child': False, 'exec_child': False, 'exe': app},
        'notes': ['sample data made by tests/report/html/make_sample_page.py'],
    }


def data_element(doc, plain, corrupt=None):
    """The data element; corrupt: 'base64' (not base64), 'gzip' (base64 of a broken gzip
    stream) or 'truncated' (base64 of the first half of the gzip stream)."""
    text = json.dumps(doc, separators=(',', ':'))
    if plain:
        return ('<script id="lowalloc-data" type="application/octet-stream" data-encoding="json">' +
                text.replace('<', '\\u003c') + '</script>')
    packed = gzip.compress(text.encode('utf-8'), compresslevel=6)
    if corrupt == 'gzip':
        packed = packed[:10] + bytes(b ^ 0x5a for b in packed[10:200]) + packed[200:]
    elif corrupt == 'truncated':
        packed = packed[:len(packed) // 2]
    payload = base64.b64encode(packed).decode('ascii')
    if corrupt == 'base64':
        payload = 'H4sI' + 'not-base64!' + payload[40:80]
    return ('<script id="lowalloc-data" type="application/octet-stream" data-encoding="gzip-base64">' +
            payload + '</script>')


def assemble(data_html, extra_js=''):
    def read(name):
        with open(os.path.join(PAGE_DIR, name), encoding='utf-8') as f:
            return f.read()
    page, css, js = read('page.html'), read('page.css'), read('page.js')
    out = []
    for line in page.split('\n'):
        s = line.strip()
        if s == '/*LOWALLOC_CSS*/':
            out.append(css)
        elif s == '/*LOWALLOC_JS*/':
            out.append(js)
        elif s == '<!--LOWALLOC_DATA-->':
            out.append(data_html)
        else:
            out.append(line)
    html = '\n'.join(out)
    if extra_js:
        html = html.replace('</body>', '<script>\n' + extra_js + '\n</script>\n</body>')
    return html


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out')
    ap.add_argument('--nodes', type=int, default=3000)
    ap.add_argument('--threads', type=int, default=3)
    ap.add_argument('--seed', type=int, default=17)
    ap.add_argument('--plain', action='store_true')
    ap.add_argument('--corrupt', choices=['base64', 'gzip', 'truncated'])
    ap.add_argument('--json')
    ap.add_argument('--write-json')
    ap.add_argument('--extra-js')
    a = ap.parse_args()
    if a.json:
        with open(a.json, encoding='utf-8') as f:
            doc = json.load(f)
    else:
        doc = generate(a.nodes, a.threads, a.seed)
    if a.write_json:
        with open(a.write_json, 'w', encoding='utf-8') as f:
            json.dump(doc, f)
    extra = ''
    if a.extra_js:
        with open(a.extra_js, encoding='utf-8') as f:
            extra = f.read()
    html = assemble(data_element(doc, a.plain, a.corrupt), extra)
    with open(a.out, 'w', encoding='utf-8') as f:
        f.write(html)
    return 0


if __name__ == '__main__':
    sys.exit(main())
