#!/usr/bin/env python3
"""Runs rdma-core's test suite (pyverbs) in the test guest, one line a test.

    pyverbs-run.py SUITE_DIR OUT --dev DEV [--gid N] MODULE...

SUITE_DIR holds rdma-core's `tests` package (run_tests.py, args_parser.py);
MODULE is one of its modules (test_pd, ...). Each finished test appends
`ID<TAB>RESULT<TAB>SECONDS<TAB>REASON` to OUT, RESULT one of pass, skip,
fail, error, expected-fail, unexpected-pass; REASON is pyverbs' skip
reason or the last line of the failure. Tests already in OUT are not run
again, so a run stopped by the per-test watchdog (--test-timeout, the test
is written as `timeout` and the process exits 3) goes on where it stopped
when started again. Exit status: 0 when every test ran, 3 on a timeout.
"""
import argparse
import os
import sys
import threading
import time
import unittest


def read_done(out):
    """The test ids OUT already has a result for."""
    done = set()
    try:
        with open(out) as f:
            for line in f:
                done.add(line.split('\t', 1)[0])
    except FileNotFoundError:
        pass
    return done


def one_line(text):
    """The last non-empty line of TEXT, tabs and newlines out of it."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    return (lines[-1] if lines else '').replace('\t', ' ')


class LineResult(unittest.TestResult):
    """Writes each test's result as one line to a file, as it ends."""

    def __init__(self, out, timeout):
        super().__init__()
        self.out = out
        self.timeout = timeout
        self.started = 0.0
        self.watchdog = None
        self.outcome = None

    def startTest(self, test):
        super().startTest(test)
        self.started = time.monotonic()
        self.outcome = ('pass', '')
        tid = test.id()
        self.watchdog = threading.Timer(self.timeout, self.expire, [tid])
        self.watchdog.daemon = True
        self.watchdog.start()

    def expire(self, tid):
        self.write(tid, 'timeout', f'no result after {self.timeout:g} s')
        os._exit(3)

    def write(self, tid, result, reason):
        secs = time.monotonic() - self.started
        with open(self.out, 'a') as f:
            f.write(f'{tid}\t{result}\t{secs:.1f}\t{reason}\n')

    def stopTest(self, test):
        self.watchdog.cancel()
        self.write(test.id(), *self.outcome)
        super().stopTest(test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcome = ('skip', one_line(reason))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcome = ('fail', one_line(self.failures[-1][1]))

    def addError(self, test, err):
        super().addError(test, err)
        if isinstance(test, unittest.TestCase):
            self.outcome = ('error', one_line(self.errors[-1][1]))
        else:  # a setUpClass or module fixture: no startTest for it
            self.started = time.monotonic()
            self.write(test.id(), 'error', one_line(self.errors[-1][1]))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.outcome = ('expected-fail', '')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.outcome = ('unexpected-pass', '')


def flatten(suite):
    """The test cases in SUITE, nested suites opened."""
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('suite_dir')
    ap.add_argument('out')
    ap.add_argument('--dev', required=True)
    ap.add_argument('--gid', type=int)
    ap.add_argument('--test-timeout', type=float, default=60)
    ap.add_argument('modules', nargs='+')
    a = ap.parse_args()

    # The suite reads its options through args_parser (as run_tests.py
    # does) and imports itself as the package `tests`.
    sys.path[:0] = [a.suite_dir, os.path.dirname(a.suite_dir)]
    sys.argv = [sys.argv[0], '--dev', a.dev]
    if a.gid is not None:
        sys.argv += ['--gid', str(a.gid)]
    from args_parser import parser
    parser.parse_args()
    import tests  # noqa: F401 (loads every module, as run_tests.py does)

    done = read_done(a.out)
    loader = unittest.TestLoader()
    todo = unittest.TestSuite()
    for m in a.modules:
        for t in flatten(loader.loadTestsFromName('tests.' + m)):
            if t.id() not in done:
                todo.addTest(t)
    result = LineResult(a.out, a.test_timeout)
    todo.run(result)
    return 0


if __name__ == '__main__':
    sys.exit(main())
