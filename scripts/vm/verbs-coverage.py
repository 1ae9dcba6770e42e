#!/usr/bin/env python3
"""pkg/verbs' coverage of rdma-core's test suite (pyverbs), per device.

    verbs-coverage.py [--markdown] TABLE DIR DEV...

TABLE is scripts/vm/verbs-coverage.tsv: `PYVERBS_TEST<TAB>GO_TEST<TAB>WHY`,
GO_TEST `-` where no Go test covers it yet and WHY says why (comments and
blank lines allowed). DIR holds, for each DEV, pyverbs' results
(pyverbs-DEV.tsv, from pyverbs-run.py) and the Go tests' verbose log
(verbs-go-DEV.log, from checks/80-verbs.sh).

Prints one line per pyverbs test: PASS when a Go test covers it and passes
on every device where pyverbs passes (and fails nowhere), FAIL when it
does not, GAP when no Go test covers a test pyverbs passes, and NONE when
pyverbs passes it nowhere and no Go test covers it; then the closing count
of (test, device) pairs: those pyverbs passes, and of them those whose Go
test passes on the same device. With --markdown it prints the same as a
Markdown table (docs/verbs.md) instead.
"""
import re
import sys


def read_table(path):
    """{pyverbs id: (go test or '-', why)}, and the ids in file order."""
    table, order = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.startswith('#'):
                continue
            cols = line.split('\t')
            if len(cols) < 2 or not cols[0] or not cols[1]:
                sys.exit(f'{path}:{n}: want PYVERBS_TEST<TAB>GO_TEST[<TAB>WHY], got {line!r}')
            if cols[0] in table:
                sys.exit(f'{path}:{n}: {cols[0]} is in the table twice')
            table[cols[0]] = (cols[1], cols[2] if len(cols) > 2 else '')
            order.append(cols[0])
    return table, order


def read_pyverbs(path):
    """{test id: (result, reason)} from pyverbs-run.py's output."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                cols = line.rstrip('\n').split('\t')
                if len(cols) >= 2:
                    res[cols[0]] = (cols[1], cols[3] if len(cols) > 3 else '')
    except FileNotFoundError:
        pass
    return res


GO_RESULT = re.compile(r'^\s*--- (PASS|FAIL|SKIP): (\S+) \(')


def read_go(path):
    """{test or subtest name: pass, fail or skip} from a go test -v log."""
    res = {}
    try:
        with open(path) as f:
            for line in f:
                m = GO_RESULT.match(line)
                if m:
                    res[m.group(2)] = m.group(1).lower()
    except FileNotFoundError:
        pass
    return res


def main(argv):
    markdown = argv[:1] == ['--markdown']
    if markdown:
        argv = argv[1:]
    if len(argv) < 3:
        sys.exit(__doc__)
    table, order = read_table(argv[0])
    devs = argv[2:]
    py = {d: read_pyverbs(f'{argv[1]}/pyverbs-{d}.tsv') for d in devs}
    go = {d: read_go(f'{argv[1]}/verbs-go-{d}.log') for d in devs}
    ids = list(order)
    for d in devs:
        ids += sorted(t for t in py[d] if t not in table and t not in ids)

    if markdown:
        print('| pyverbs test | ' + ' | '.join(devs) + ' | Go test | ' +
              ' | '.join(devs) + ' | why not covered |')
        print('|---' * (2 * len(devs) + 3) + '|')
    passed = {d: 0 for d in devs}
    covered = {d: 0 for d in devs}
    for t in ids:
        gotest, why = table.get(t, ('-', 'not in the table'))
        pyres = [py[d].get(t, ('not run', ''))[0] for d in devs]
        gores = ['-' if gotest == '-' else go[d].get(gotest, 'not run') for d in devs]
        bad = False
        for d, p, g in zip(devs, pyres, gores):
            if p == 'pass':
                passed[d] += 1
                if g == 'pass':
                    covered[d] += 1
                elif gotest != '-':
                    bad = True
            if g == 'fail' or g == 'not run':
                bad = True
        if markdown:
            short = t[len('tests.'):] if t.startswith('tests.') else t
            print(f'| {short} | ' + ' | '.join(pyres) + f' | {gotest} | ' +
                  ' | '.join(gores) + f' | {why if gotest == "-" else ""} |')
            continue
        if gotest != '-':
            verdict = 'FAIL' if bad else 'PASS'
        else:
            verdict = 'GAP ' if 'pass' in pyres else 'NONE'
        line = f'{verdict} {t}: pyverbs ' + ', '.join(
            f'{d} {p}' for d, p in zip(devs, pyres))
        if gotest != '-':
            line += f'; go {gotest}: ' + ', '.join(
                f'{d} {g}' for d, g in zip(devs, gores))
        print(line)
    n, m = sum(covered.values()), sum(passed.values())
    per = ', '.join(f'{d}: {covered[d]} of {passed[d]}' for d in devs)
    print(('\n' if markdown else '') + f'verbs coverage: {n} of {m} pyverbs '
          f'tests that pass on rxe/siw pass in Go too ({per})')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
