# Helpers the Python tests share (imported through sys.path, as no_skip is):
# running tapegpt, and a scratch directory per unittest class.
"""run(tapegpt, *args) runs the binary; assert_one_error_line checks a
user's mistake got one clear error line; class_temp_dir(cls, prefix) makes a
directory that is removed after the class's last test; prepare_corpus_head
prepares the start of the embedded Tiny Shakespeare."""
import os
import shutil
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(tapegpt, *args, ok=True, timeout=120, **kw):
    """Runs tapegpt with captured text output (kw goes to subprocess.run, e.g.
    input=, env=, cwd=); when ok, a non-zero exit raises AssertionError with
    the command, its stdout and its stderr."""
    p = subprocess.run([tapegpt, *args], capture_output=True, text=True, timeout=timeout, **kw)
    if ok and p.returncode != 0:
        raise AssertionError(f"tapegpt {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def assert_one_error_line(test, p, args, code, must_mention):
    """The promise for a user's mistake: exit `code`, exactly one non-empty
    stderr line, an "error:" line that mentions `must_mention` (any case),
    no Python traceback. Returns that line."""
    test.assertEqual(p.returncode, code, f"{args}: stderr={p.stderr!r}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    test.assertEqual(len(lines), 1, f"{args}: want one error line, got {p.stderr!r}")
    test.assertIn("error:", lines[0])
    test.assertIn(must_mention.lower(), lines[0].lower(), f"{args}: {lines[0]!r}")
    test.assertNotIn("Traceback", p.stderr)
    return lines[0]


def class_temp_dir(cls, prefix):
    """A fresh directory (tempfile.mkdtemp) for the unittest class `cls`,
    removed with its contents once the class is done, also when its
    setUpClass fails part-way. Call it from setUpClass."""
    path = tempfile.mkdtemp(prefix=prefix)
    cls.addClassCleanup(shutil.rmtree, path, ignore_errors=True)
    return path


def prepare_corpus_head(tapegpt, tmp, chars=40000):
    """The first `chars` characters of data/tinyshakespeare.txt, prepared with
    the char tokenizer into tmp/data; returns that directory."""
    corpus = os.path.join(tmp, "tiny.txt")
    with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
        text = f.read()[:chars]
    with open(corpus, "w", encoding="utf-8") as f:
        f.write(text)
    data = os.path.join(tmp, "data")
    run(tapegpt, "prepare", "--input", corpus, "--tokenizer", "char", "--out", data)
    return data
