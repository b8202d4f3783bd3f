#!/usr/bin/python3
# Writes that cannot complete — a file-size limit, a full disk, a read-only
# directory — give one clear error line and a non-zero exit, and leave the
# previous checkpoint or token files byte-identical, loadable, and no
# temporary file behind.
"""Run by CTest as: test_io_failures.py PATH/TO/tapegpt

How each failure is made (we run as root in CI, where chmod does not stop a
write):
- "file too large": RLIMIT_FSIZE in the child (preexec_fn) with SIGXFSZ
  ignored, so write() fails with EFBIG. Works for any user.
- "disk full": a tmpfs of a few hundred KiB, so write() fails with ENOSPC.
- "read-only directory": that tmpfs remounted read-only (EROFS).
The tmpfs cases need mount(2): as root the script re-executes itself under
`unshare -m --propagation private`, so its mounts are private and vanish with
the process even if it is killed. Without root or unshare they are skipped,
except under TAPEGPT_NO_SKIP=1 (CI, which runs as root), where they fail.
"""
import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

import robutil
import testutil  # tests/support, on sys.path through robutil

TAPEGPT = None
NS_ENV = "TAPEGPT_IO_TEST_IN_NAMESPACE"


def fsize_limited(limit):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    return preexec


def snapshot(d):
    """{file name: sha256} of a directory."""
    out = {}
    for n in sorted(os.listdir(d)):
        with open(os.path.join(d, n), "rb") as f:
            out[n] = hashlib.sha256(f.read()).hexdigest()
    return out


class Tmpfs:
    """A tmpfs of `kib` KiB at a fresh directory; unmounted on exit."""

    def __init__(self, parent, kib):
        self.path = tempfile.mkdtemp(dir=parent, prefix="tmpfs-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", self.path],
                       check=True, capture_output=True)

    def read_only(self):
        subprocess.run(["mount", "-o", "remount,ro", self.path], check=True, capture_output=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.path], capture_output=True)
        os.rmdir(self.path)


def can_mount():
    if os.environ.get(NS_ENV) != "1":
        return False
    try:
        with Tmpfs(tempfile.gettempdir(), 64):
            return True
    except (subprocess.CalledProcessError, OSError):
        return False


class IoFailures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-io-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.flags = ["--data", cls.data, *robutil.TINY_MODEL, "--ckpt-interval", "1",
                     "--eval-interval", "0", "--eval-steps", "4", "--lr-decay-steps", "10",
                     "--dropout", "0.1", "--threads", "2"]
        cls.run10 = os.path.join(cls.tmp, "run10")
        robutil.run(TAPEGPT, "train", *cls.flags, "--max-steps", "10", "--out", cls.run10)
        ref12 = os.path.join(cls.tmp, "ref12")
        robutil.run(TAPEGPT, "train", *cls.flags, "--max-steps", "12", "--out", ref12)
        cls.ref12 = robutil.checkpoint_state(os.path.join(ref12, "ckpt.h5"))
        cls.ckpt_bytes = os.path.getsize(os.path.join(cls.run10, "ckpt.h5"))
        cls.mount = can_mount()
        cls.tsan = robutil.built_with_tsan(TAPEGPT)

    # A resumed run writes to the directory recorded in its checkpoint unless
    # --out says otherwise, so every resume of a copied run passes --out.
    def copy_run(self, name, parent=None):
        dst = os.path.join(parent or self.tmp, name)
        shutil.copytree(self.run10, dst)
        return dst

    def expect_clean_failure(self, p, mention):
        """One error line naming `mention`, exit 1, no traceback or crash."""
        self.assertEqual(p.returncode, 1, f"stdout={p.stdout!r} stderr={p.stderr!r}")
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, f"want one error line, got {p.stderr!r}")
        self.assertRegex(lines[0], r"^tapegpt \w+: error: ")
        self.assertIn(mention, lines[0])
        return lines[0]

    def expect_intact_run(self, run_dir, before):
        """The checkpoint is byte-identical, loads (eval), nothing temporary
        is left, and the run still resumes to the uninterrupted result."""
        self.assertEqual(robutil.temp_files(run_dir), [])
        after = snapshot(run_dir)
        for name in ("ckpt.h5", "best.h5"):
            self.assertEqual(after[name], before[name], f"{name} changed")
        ckpt = os.path.join(run_dir, "ckpt.h5")
        robutil.run(TAPEGPT, "eval", "--ckpt", ckpt, "--tokens", os.path.join(self.data, "val.bin"),
                    "--json", "--batch-size", "4")

    def resume_to_12_matches_reference(self, run_dir):
        ckpt = os.path.join(run_dir, "ckpt.h5")
        robutil.run(TAPEGPT, "train", "--resume", ckpt, "--max-steps", "12", "--out", run_dir,
                    "--threads", "2")
        self.assertEqual(robutil.state_difference(self.ref12, robutil.checkpoint_state(ckpt)), "")

    # ---- training: a checkpoint save that cannot complete ------------------
    def test_checkpoint_save_over_the_file_size_limit(self):
        if self.tsan:
            robutil.no_skip.skip_test_or_fail(self, "TSan's runtime cannot start under a small RLIMIT_FSIZE")
        # Limits that stop the save early, midway, and at its last bytes.
        for limit in (4096, self.ckpt_bytes // 2, self.ckpt_bytes - 1):
            with self.subTest(limit=limit):
                run_dir = self.copy_run(f"fsize{limit}")
                before = snapshot(run_dir)
                p = robutil.run(TAPEGPT, "train", "--resume", os.path.join(run_dir, "ckpt.h5"),
                                "--max-steps", "12", "--out", run_dir, "--threads", "2", ok=False,
                                preexec_fn=fsize_limited(limit))
                line = self.expect_clean_failure(p, "ckpt.h5")
                self.assertNotIn("step 12", p.stdout)  # stopped at the failed save of step 11
                self.expect_intact_run(run_dir, before)
                self.assertEqual(robutil.checkpoint_step(os.path.join(run_dir, "ckpt.h5")), 10, line)
                self.resume_to_12_matches_reference(run_dir)

    def test_disk_full_during_a_save(self):
        if not self.mount:
            robutil.no_skip.skip_test_or_fail(self, "needs root and unshare for a private tmpfs")
        # Room for one checkpoint and the metrics, not for the next
        # checkpoint's temporary file beside it.
        kib = (self.ckpt_bytes * 3 // 2) // 1024 + 8
        with Tmpfs(self.tmp, kib) as fs:
            run_dir = os.path.join(fs.path, "run")
            p = robutil.run(TAPEGPT, "train", *self.flags, "--max-steps", "10", "--out", run_dir,
                            ok=False)
            line = self.expect_clean_failure(p, "ckpt.h5")
            self.assertEqual(robutil.temp_files(run_dir), [])
            self.assertEqual(robutil.checkpoint_step(os.path.join(run_dir, "ckpt.h5")), 1, line)
            # The surviving step-1 checkpoint resumes, elsewhere, to the same result.
            moved = os.path.join(self.tmp, "from_full_disk")
            shutil.copytree(run_dir, moved)
        ckpt = os.path.join(moved, "ckpt.h5")
        robutil.run(TAPEGPT, "train", "--resume", ckpt, "--max-steps", "12", "--out", moved,
                    "--threads", "2")
        self.assertEqual(robutil.state_difference(self.ref12, robutil.checkpoint_state(ckpt)), "")

    # metrics.jsonl on a full disk: the write failure must stop training with
    # a clear error (not drop rows silently), and a later resume must start
    # on a fresh line after the torn one.
    def test_metrics_on_a_full_disk(self):
        if not self.mount:
            robutil.no_skip.skip_test_or_fail(self, "needs root and unshare for a private tmpfs")
        with Tmpfs(self.tmp, 8) as fs:
            run_dir = os.path.join(fs.path, "run")
            p = robutil.run(TAPEGPT, "train", *self.flags, "--max-steps", "200", "--ckpt-interval", "0",
                            "--out", run_dir, ok=False)
            self.assertNotEqual(p.returncode, 0)
            robutil.metrics(os.path.join(run_dir, "metrics.jsonl"))  # raises on a torn line
            self.assertIn("metrics.jsonl", p.stderr)

    def test_read_only_run_directory(self):
        if not self.mount:
            robutil.no_skip.skip_test_or_fail(self, "needs root and unshare for a read-only tmpfs")
        with Tmpfs(self.tmp, 4096) as fs:
            run_dir = self.copy_run("run", fs.path)
            before = snapshot(run_dir)
            fs.read_only()
            p = robutil.run(TAPEGPT, "train", "--resume", os.path.join(run_dir, "ckpt.h5"),
                            "--max-steps", "12", "--out", run_dir, "--threads", "2", ok=False)
            self.expect_clean_failure(p, run_dir)
            self.expect_intact_run(run_dir, before)
            self.assertEqual(snapshot(run_dir), before)
            # A new run pointed at a read-only directory fails the same way.
            p = robutil.run(TAPEGPT, "train", *self.flags, "--max-steps", "2",
                            "--out", os.path.join(run_dir, "new"), ok=False)
            self.expect_clean_failure(p, run_dir)

    # ---- prepare: token files that cannot be written ----------------------
    def prepare_into(self, out, chars, val_fraction="0.1", **kw):
        src = os.path.join(self.tmp, f"text{chars}.txt")
        with open(os.path.join(robutil.REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
            text = f.read()[-chars:]  # other text than the existing files hold
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        return robutil.run(TAPEGPT, "prepare", "--input", src, "--tokenizer", "char", "--out", out,
                           "--val-fraction", val_fraction, ok=False, **kw)

    def expect_intact_data(self, out, before):
        self.assertEqual(snapshot(out), before, "existing prepared files changed")
        robutil.run(TAPEGPT, "tokenize", "--data", out, "hello")
        robutil.run(TAPEGPT, "train", "--data", out, "--out", os.path.join(self.tmp, "check-" + os.path.basename(out)),
                    *robutil.TINY_MODEL, "--max-steps", "1", "--eval-steps", "1", "--threads", "2")

    def test_prepare_over_the_file_size_limit(self):
        if self.tsan:
            robutil.no_skip.skip_test_or_fail(self, "TSan's runtime cannot start under a small RLIMIT_FSIZE")
        for limit in (1024, 20000):
            with self.subTest(limit=limit):
                out = os.path.join(self.tmp, f"data-fsize{limit}")
                shutil.copytree(self.data, out)
                before = snapshot(out)
                p = self.prepare_into(out, 60000, preexec_fn=fsize_limited(limit))
                self.expect_clean_failure(p, out)
                self.expect_intact_data(out, before)

    def test_prepare_into_a_read_only_directory(self):
        if not self.mount:
            robutil.no_skip.skip_test_or_fail(self, "needs root and unshare for a read-only tmpfs")
        with Tmpfs(self.tmp, 1024) as fs:
            out = os.path.join(fs.path, "data")
            shutil.copytree(self.data, out)
            before = snapshot(out)
            fs.read_only()
            self.expect_clean_failure(self.prepare_into(out, 60000), out)
            self.assertEqual(snapshot(out), before)

    # prepare writes all three files before renaming any, so a disk that
    # fills up part way never mixes a new train.bin with old files.
    def test_prepare_disk_full_after_the_first_file(self):
        # Room for the new train.bin beside the old files, not for val.bin
        # after it: each file is atomic, but is the directory as a whole?
        if not self.mount:
            robutil.no_skip.skip_test_or_fail(self, "needs root and unshare for a private tmpfs")
        pages = lambda n: (n + 4095) // 4096 * 4  # tmpfs allocates whole 4 KiB pages  # noqa: E731
        old = {n: os.path.getsize(os.path.join(self.data, n)) for n in os.listdir(self.data)}
        chars, frac = 60000, 0.8
        new_train, new_val = 32 + 2 * int(chars * (1 - frac)), 32 + 2 * int(chars * frac)
        fits_train = sum(pages(s) for s in old.values()) + pages(new_train)
        fits_val = pages(old["val.bin"]) + pages(old["tokenizer.json"]) + pages(new_train) + pages(new_val)
        self.assertLess(fits_train, fits_val)
        with Tmpfs(self.tmp, (fits_train + fits_val) // 2) as fs:
            out = os.path.join(fs.path, "data")
            shutil.copytree(self.data, out)
            before = snapshot(out)
            p = self.prepare_into(out, chars, str(frac))
            self.expect_clean_failure(p, out)
            self.assertEqual(robutil.temp_files(out), [])
            self.assertEqual(snapshot(out), before,
                             "train.bin was replaced but val.bin and "
                             "tokenizer.json were not, so the directory mixes two corpora")


def main():
    global TAPEGPT
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    robutil.require_tools()
    if os.geteuid() == 0 and os.environ.get(NS_ENV) is None and shutil.which("unshare"):
        probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
        env = dict(os.environ, **{NS_ENV: "1" if probe.returncode == 0 else "0"})
        if probe.returncode == 0:
            os.execvpe("unshare", ["unshare", "-m", "--propagation", "private", sys.executable,
                                   os.path.abspath(__file__), TAPEGPT, *sys.argv[1:]], env)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
