#!/usr/bin/env python3
"""The Event reasons and status conditions the C sources write, against the
reference pages that list them (tests/integration/test_docs.sh runs it).

    doc_reasons.py SOURCE_DIR events DOC       (docs/reference/events.md)
    doc_reasons.py SOURCE_DIR conditions DOC   (docs/reference/conditions.md)

It prints each difference on a line and exits 1 when there is one.

How the code is read. The writers are kp_eventq_post, kp_eventq_post_dedupe and
kp_kube_record (the Event reason argument) and kp_obj_set_condition (condition
type and reason), plus every function that passes one of its own parameters on
to a writer in that position (a wrapper such as termination.c's node_event),
found to a fixed point; static wrappers are matched within their file. At each
call the argument is a string literal, a `#define` of one, NULL, or a ternary
of those. Anything else is followed for events only: a struct field (`->x`,
`.x`) to every assignment of that field and every positional or designated
initializer of a struct declaring it (shared/disruption/reasons.c's table), a
local to the assignments in its file (`*reason = "..."`). A reason this cannot
find is an error, so a new way of writing events cannot slip past the check.
EC2NodeClass conditions are built as `cond` structs (cloud/aws/
nodeclass_status.c): their initializers give type and reason, and the
resolvers' kp_ncr_why initializers more reasons. Condition reasons held in
variables (a drift reason, a launch failure's) are not followed: the reference
lists them, and each reason it lists must be a string in the code.
"""
import glob
import os
import re
import sys

STR = r'"(?:[^"\\]|\\.)*"'
CAMEL = re.compile(r'^[A-Z][A-Za-z0-9]*$')
IDENT = re.compile(r'^[A-Za-z_]\w*$')
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
FUNC = re.compile(r'^([A-Za-z_][\w \t\*]*?)\b([A-Za-z_]\w*)\s*\(', re.M)
NOT_FUNC = {'if', 'for', 'while', 'switch', 'return', 'sizeof', 'typedef', 'struct', 'enum', 'union'}

EVENT_WRITERS = {'kp_eventq_post': {'reason': ('arg', 4)}, 'kp_eventq_post_dedupe': {'reason': ('arg', 4)},
                 'kp_kube_record': {'reason': ('arg', 4)}}
CONDITION_WRITERS = {'kp_obj_set_condition': {'type': ('arg', 1), 'reason': ('arg', 3)}}
# The event queue and the recorder pass on what others gave them.
PLUMBING = {'controller/eventq.c', 'shared/kube/events.c'}


def strip_comments(text):
    """Comments out, strings and line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append('\n' * text.count('\n', i, j))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def skip_string(text, i):
    q, j = text[i], i + 1
    while j < len(text) and text[j] != q:
        j += 2 if text[j] == '\\' else 1
    return j + 1


def scan(text, i=0):
    """(index, character, bracket depth before it) for each character outside strings."""
    depth, j = 0, i
    while j < len(text):
        c = text[j]
        if c in '"\'':
            j = skip_string(text, j)
            continue
        yield j, c, depth
        depth += (c in '([{') - (c in ')]}')
        j += 1


def close_of(text, i):
    """Index just past the bracket matching the one at text[i]."""
    for j, c, depth in scan(text, i):
        if c in ')]}' and depth == 1:
            return j + 1
    return len(text)


def split_top(s, sep=','):
    """`s` cut at `sep` outside brackets and strings."""
    parts, start = [], 0
    for j, c, depth in scan(s):
        if c == sep and depth == 0:
            parts.append(s[start:j])
            start = j + 1
    parts.append(s[start:])
    return [p.strip() for p in parts]


def read_expr(text, i):
    """The expression starting at i, up to a `,` `;` or closing bracket at its level."""
    for j, c, depth in scan(text, i):
        if depth == 0 and (c in ',;' or c in ')]}'):
            return text[i:j].strip()
    return text[i:].strip()


def ternary(expr):
    """(condition, then, else) when `expr` is a ternary at its top level, else None."""
    q, nested = -1, 0
    for j, c, depth in scan(expr):
        if depth or c not in '?:':
            continue
        if c == '?':
            q, nested = (j, 0) if q < 0 else (q, nested + 1)
        elif q >= 0 and nested == 0:
            return expr[:q], expr[q + 1:j], expr[j + 1:]
        elif q >= 0:
            nested -= 1
    return None


class Source:
    def __init__(self, root):
        self.root = root
        self.files = {}    # relative path -> text without comments
        self.defines = {}  # relative path -> {NAME: "value"}
        for pattern in ('controller/*.c', 'controller/*.h', 'shared/**/*.c', 'shared/**/*.h'):
            for path in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
                rel = os.path.relpath(path, root)
                with open(path, encoding='utf-8') as f:
                    text = strip_comments(f.read())
                self.files[rel] = text
                self.defines[rel] = {m.group(1): m.group(2)[1:-1] for m in
                                     re.finditer(r'^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(' + STR + r')[ \t]*$', text, re.M)}
        self.functions = [f for rel, text in self.files.items() if rel.endswith('.c') for f in self._functions(rel, text)]
        self.structs = self._structs()

    @staticmethod
    def _functions(rel, text):
        for m in FUNC.finditer(text):
            prefix, name = m.group(1), m.group(2)
            if name in NOT_FUNC or prefix.split()[:1] and prefix.split()[0] in NOT_FUNC or text[m.start()] == '#':
                continue
            open_paren = m.end() - 1
            after = close_of(text, open_paren)
            rest = text[after:].lstrip()
            if not rest.startswith('{'):
                continue
            body_start = after + (len(text[after:]) - len(rest))
            params = []
            for p in split_top(text[open_paren + 1:after - 1]):
                words = re.findall(r'\w+', p)
                if words and p not in ('void', '...'):
                    params.append(words[-1])
            yield {'file': rel, 'name': name, 'static': 'static' in prefix.split(), 'params': params,
                   'start': body_start, 'end': close_of(text, body_start)}

    def _structs(self):
        """struct name -> (file it is declared in, its field names in order)."""
        out = {}
        for rel, text in self.files.items():
            for m in re.finditer(r'typedef\s+struct\s*(\w*)\s*\{', text):
                end = close_of(text, m.end() - 1)
                alias = re.match(r'\s*(\w+)\s*;', text[end:])
                fields = []
                for decl in split_top(text[m.end():end - 1], ';'):
                    decl = re.sub(r'\[[^\]]*\]', '', decl)
                    for piece in split_top(decl):
                        words = re.findall(r'\w+', piece)
                        if words:
                            fields.append(words[-1])
                for name in (m.group(1), alias.group(1) if alias else ''):
                    if name:
                        out[name] = (rel, fields)
        return out

    def line_of(self, rel, pos):
        return self.files[rel].count('\n', 0, pos) + 1

    def calls(self, fn):
        text = self.files[fn['file']]
        for m in CALL.finditer(text, fn['start'], fn['end']):
            end = close_of(text, m.end() - 1)
            yield m.group(1), split_top(text[m.end():end - 1]), m.start()

    def direct(self, expr, rel):
        """The values of a literal, a #define, NULL or a ternary of them; None for anything else."""
        expr = expr.strip()
        while expr.startswith('(') and close_of(expr, 0) == len(expr):
            expr = expr[1:-1].strip()
        t = ternary(expr)
        if t:
            a, b = self.direct(t[1], rel), self.direct(t[2], rel)
            return None if a is None or b is None else a | b
        if re.fullmatch(STR, expr):
            return {expr[1:-1]}
        if expr == 'NULL':
            return set()
        if IDENT.match(expr) and expr in self.defines.get(rel, {}):
            return {self.defines[rel][expr]}
        return None

    def initializers(self, struct):
        """Each initializer of `struct` (positional or designated) as {field: expression}, with its file."""
        decl_file, fields = self.structs[struct]
        files = [decl_file] if decl_file.endswith('.c') else [f for f in self.files if f.endswith('.c')]
        for rel in files:
            text = self.files[rel]
            pat = r'\b%s\s+\w+\s*(\[[^\]]*\])?\s*=\s*\{|\(\s*%s\s*\)\s*\{' % (re.escape(struct), re.escape(struct))
            for m in re.finditer(pat, text):
                body = text[m.end():close_of(text, m.end() - 1) - 1]
                elems = split_top(body) if m.group(1) is not None else ['{' + body + '}']
                for e in elems:
                    e = re.sub(r'^\[[^\]]*\]\s*=\s*', '', e)
                    if not e.startswith('{'):
                        continue
                    values = {}
                    for k, v in enumerate(split_top(e[1:-1])):
                        d = re.match(r'\.(\w+)\s*=\s*(.*)$', v, re.S)
                        if d:
                            values[d.group(1)] = d.group(2)
                        elif k < len(fields):
                            values[fields[k]] = v
                    yield rel, values

    def followed(self, expr, rel):
        """Events only: what a field or a local may hold, from its assignments and initializers."""
        m = re.fullmatch(r'(?:[\w\[\]]+\s*(->|\.)\s*)*(\w+)', expr.strip())
        if not m:
            return None
        name, is_field = m.group(2), m.group(1) is not None
        found = set()
        if is_field:
            sites = [(r, t) for r, t in self.files.items() if r.endswith('.c')]
            pat = r'(?:->|\.)\s*%s\s*=(?!=)' % name
        else:
            sites = [(rel, self.files[rel])]
            pat = r'(?<![\w.>])\*?\s*%s\s*=(?!=)' % name
        for r, text in sites:
            for a in re.finditer(pat, text):
                found |= self.direct(read_expr(text, a.end()), r) or set()
        if is_field:
            for struct, (_, fields) in self.structs.items():
                if name in fields:
                    for r, values in self.initializers(struct):
                        found |= self.direct(values.get(name, 'NULL'), r) or set()
        return found or None


def writers(src, base):
    """Every writer: key ((file, name) for static ones, else name) -> {role: ('arg', index) | ('fixed', values)}."""
    known = dict(base)

    def lookup(rel, name):
        return known.get((rel, name)) or known.get(name)

    changed = True
    while changed:
        changed = False
        for fn in src.functions:
            key = (fn['file'], fn['name']) if fn['static'] else fn['name']
            if key in known:
                continue
            for name, args, _ in src.calls(fn):
                spec = lookup(fn['file'], name)
                if not spec:
                    continue
                mine = {}
                for role, (kind, v) in spec.items():
                    if kind == 'arg' and v < len(args) and args[v] in fn['params']:
                        mine[role] = ('arg', fn['params'].index(args[v]))
                if not mine:
                    continue
                for role, (kind, v) in spec.items():
                    if role not in mine:
                        mine[role] = ('fixed', src.direct(args[v], fn['file']) if kind == 'arg' else v)
                known[key] = mine
                changed = True
                break
    return lookup


def written(src, base, follow):
    """(file, line, {role: set of values, or None when not known}) for every writing call."""
    lookup = writers(src, base)
    for fn in src.functions:
        if fn['file'] in PLUMBING:
            continue
        own = lookup(fn['file'], fn['name'])
        for name, args, pos in src.calls(fn):
            spec = lookup(fn['file'], name)
            if not spec:
                continue
            if own and any(k == 'arg' and v < len(args) and args[v] in fn['params'] for k, v in spec.values()):
                continue  # a wrapper passing its parameter on: its callers are read instead
            values = {}
            for role, (kind, v) in spec.items():
                if kind == 'fixed':
                    values[role] = v
                    continue
                expr = args[v] if v < len(args) else ''
                got = src.direct(expr, fn['file'])
                if got is None and follow:
                    got = src.followed(expr, fn['file'])
                values[role] = got
                if got is None:
                    values[role + '_expr'] = expr
            yield fn['file'], src.line_of(fn['file'], pos), values


def doc_tables(path, first_header):
    """Rows (lists of cells) of every Markdown table whose first header cell is `first_header`."""
    rows, inside = [], False
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if not line.startswith('|'):
                inside = False
                continue
            cells = [c.strip() for c in line.strip('|').split('|')]
            if not inside:
                inside, take = True, cells[0] == first_header
                header = True
                continue
            if header:
                header = False
                if set(line) <= set('|-: '):
                    continue
            if take:
                rows.append(cells)
    return rows


def names(cell):
    return {w for w in re.findall(r'`([^`]+)`', cell) if CAMEL.match(w)}


def check_events(src, doc):
    problems, code = [], set()
    for rel, line, v in written(src, EVENT_WRITERS, True):
        if v['reason'] is None:
            problems.append('%s:%d: cannot tell which event reasons `%s` holds' % (rel, line, v['reason_expr']))
            continue
        for r in v['reason']:
            if CAMEL.match(r):
                code.add(r)
            else:
                problems.append('%s:%d: "%s" does not look like an event reason' % (rel, line, r))
    documented = set()
    for row in doc_tables(doc, 'reason'):
        documented |= names(row[0])
    problems += ['%s: written by the code, missing from the reference' % r for r in sorted(code - documented)]
    problems += ['%s: in the reference, written nowhere in the code' % r for r in sorted(documented - code)]
    # Why a node stays: every kind of shared/disruption/reasons.c with its event.
    kinds = {}
    for rel, values in src.initializers('kind_info'):
        kind, event = src.direct(values.get('name', 'NULL'), rel), src.direct(values.get('event_reason', 'NULL'), rel)
        if kind and event:
            kinds[next(iter(kind))] = next(iter(event))
    listed = {}
    for row in doc_tables(doc, 'kind'):
        for k in names(row[0]):
            listed[k] = names(row[1]) if len(row) > 1 else set()
    for k, e in sorted(kinds.items()):
        if k not in listed:
            problems.append('kind %s (%s): missing from the reference' % (k, e))
        elif e not in listed[k]:
            problems.append('kind %s: the code writes %s, the reference says %s' % (k, e, ', '.join(sorted(listed[k]))))
    problems += ['kind %s: in the reference, not a kind with an event in the code' % k for k in sorted(set(listed) - set(kinds))]
    if len(code) < 20 or len(kinds) < 15:
        problems.append('found only %d event reasons and %d kinds in the code' % (len(code), len(kinds)))
    return problems, '%d event reasons, %d kinds' % (len(code), len(kinds))


def check_conditions(src, doc):
    problems, types, pairs = [], set(), set()
    records = [(v.get('type'), v.get('reason')) for _, _, v in written(src, CONDITION_WRITERS, False)]
    records += [(src.direct(v.get('type', 'NULL'), rel), src.direct(v.get('reason', 'NULL'), rel))
                for rel, v in src.initializers('cond')]
    for t, r in records:
        for ty in t or ():
            types.add(ty)
            pairs |= {(ty, x) for x in r or ()}
    doc_types, doc_pairs = set(), set()
    for row in doc_tables(doc, 'type'):
        for ty in names(row[0]):
            doc_types.add(ty)
            doc_pairs |= {(ty, x) for x in (names(row[2]) if len(row) > 2 else ())}
    literals = set()
    for text in src.files.values():
        literals |= {s[1:-1] for s in re.findall(STR, text)}
    problems += ['%s: written by the code, missing from the reference' % t for t in sorted(types - doc_types)]
    problems += ['%s: in the reference, written nowhere in the code' % t for t in sorted(doc_types - types)]
    problems += ['%s reason %s: written by the code, missing from the reference' % p for p in sorted(pairs - doc_pairs)]
    problems += ['%s reason %s: in the reference, no such string in the code' % p for p in sorted(doc_pairs)
                 if p[1] not in literals]
    # The EC2NodeClass resolvers' reasons (kp_ncr_why) reach a condition of the class.
    why = set()
    for rel, v in src.initializers('kp_ncr_why'):
        why |= src.direct(v.get('reason', 'NULL'), rel) or set()
    problems += ['EC2NodeClass reason %s: written by the code, missing from the reference' % r
                 for r in sorted(why - {x for _, x in doc_pairs})]
    if len(types) < 12:
        problems.append('found only %d condition types in the code' % len(types))
    return problems, '%d condition types, %d type/reason pairs' % (len(types), len(pairs))


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ('events', 'conditions'):
        sys.exit(__doc__.split('\n\n')[1])
    src = Source(sys.argv[1])
    check = check_events if sys.argv[2] == 'events' else check_conditions
    problems, summary = check(src, sys.argv[3])
    for p in problems:
        print(p)
    if not problems:
        print(summary)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
