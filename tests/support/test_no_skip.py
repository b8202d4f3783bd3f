#!/usr/bin/python3
"""The skip-or-fail contract of tests/support/no_skip.py, checked both ways:
without TAPEGPT_NO_SKIP a would-be skip exits 77 (a unittest case is
skipped); with TAPEGPT_NO_SKIP=1 both fail. Run by CTest as: test_no_skip.py
"""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

SCRIPT = "import no_skip; no_skip.skip_or_fail('a tool is missing')"
CASE = """
import unittest, no_skip
class T(unittest.TestCase):
    def test_x(self):
        no_skip.skip_test_or_fail(self, 'a tool is missing')
unittest.main()
"""


def run(code, strict):
    env = {k: v for k, v in os.environ.items() if k != "TAPEGPT_NO_SKIP"}
    if strict:
        env["TAPEGPT_NO_SKIP"] = "1"
    return subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True, text=True)


class NoSkip(unittest.TestCase):
    def test_script_skip(self):
        p = run(SCRIPT, strict=False)
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("skipped: a tool is missing", p.stdout)
        p = run(SCRIPT, strict=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("FAIL: a tool is missing", p.stdout)

    def test_unittest_skip(self):
        p = run(CASE, strict=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("skipped=1", p.stderr)
        p = run(CASE, strict=True)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("failures=1", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
