#!/usr/bin/python3
# Kills a training run with SIGKILL at random moments, resumes it each time,
# and checks the finished run is bit-identical to one never interrupted.
"""kill_anywhere.py — "never lose a run", proved by SIGKILL.

    scripts/kill_anywhere.py TAPEGPT [--quick] [--kills N] [--steps S] [--seed X] [--keep]

1. Prepares a tiny char corpus and trains a reference run of S steps, never
   interrupted (tiny model, --ckpt-interval 1, --dropout 0.1 so the RNG state
   must survive too).
2. Starts the same run again and SIGKILLs it, then resumes it with
   `tapegpt train --resume RUN/ckpt.h5` (or starts it afresh with the original
   flags while no checkpoint exists yet) and kills it again, N times, then lets
   it finish. Kill moments are drawn at random from: a random delay after
   start; the moment a checkpoint's temporary file appears, is first written,
   or is closed (mid-save, before the rename); right after ckpt.h5 is renamed
   into place; right after a metrics line is written (step logged, not yet
   checkpointed); right after ckpt.h5 got its periodic name ckpt-STEP.h5, or
   after an older periodic checkpoint was deleted (--keep 2, always one of
   the kills: the deletion of the others may be cut short); and, last, while
   best.h5 is being saved at the final step.
   The directory is watched with inotify, so a kill lands within a fraction
   of a millisecond of the event.
3. Checks: every resume succeeds; the final ckpt.h5 (weights, both AdamW
   moments, step, RNG state, sampler position) and best.h5 equal the
   reference's bit for bit; metrics.jsonl parses, and for every step the LAST
   logged training row (loss, lr, grad_norm) and validation loss equal the
   reference's. metrics.jsonl is appended across resumes, so a step logged
   after the last checkpoint and before a kill appears twice: the re-done copy
   comes later and is the one compared (it must be, and is, identical).
   The periodic checkpoints left are the reference's two newest, bit for bit.

--quick (CTest `kill_anywhere`): 5 kills over 20 steps, a few seconds.
Default: 25 kills over 100 steps. Exit 0 on success, 1 on any difference.
Resumes pass --threads 2 like the reference, so this checks resume alone;
tests/robustness/test_thread_count.py checks thread-count independence.
Needs only the Python standard library and h5dump (h5py is used if present).
"""
import argparse
import ctypes
import os
import random
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "robustness"))
import robutil  # noqa: E402

IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x2, 0x8, 0x80, 0x100, 0x200


class DirWatch:
    """inotify on one directory (ctypes; Linux). Events are (name, mask)."""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        mask = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE
        if self.libc.inotify_add_watch(self.fd, os.fsencode(path), mask) < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + path)
        self.pending = []

    def drain(self):
        self.pending = []
        self._read(0)

    def _read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        off = 0
        while off < len(buf):
            _, mask, _, n = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16: off + 16 + n].rstrip(b"\0").decode()
            self.pending.append((name, mask))
            off += 16 + n

    def wait_for(self, match, count, proc, deadline):
        """Blocks until the count-th event for which match(name, mask) holds;
        returns False when the process exits or the deadline passes first."""
        seen = 0
        while time.monotonic() < deadline:
            while self.pending:
                name, mask = self.pending.pop(0)
                if match(name, mask):
                    seen += 1
                    if seen >= count:
                        return True
            if proc.poll() is not None:
                return False
            self._read(0.01)
        return False

    def close(self):
        os.close(self.fd)


def is_ckpt_tmp(name):
    return name.startswith("ckpt.h5.tmp")


def is_periodic(name):
    """ckpt-STEP.h5, the periodic checkpoints kept by --keep."""
    return name.startswith("ckpt-") and name.endswith(".h5") and name[5:-3].isdigit()


def periodic_files(run_dir):
    return sorted(n for n in os.listdir(run_dir) if is_periodic(n))


# Each strategy: (event matcher, how many matching events to let pass, extra delay).
STRATEGIES = {
    "tmp-created": lambda n, m: m & IN_CREATE and is_ckpt_tmp(n),
    "tmp-written": lambda n, m: m & IN_MODIFY and is_ckpt_tmp(n),
    "tmp-closed": lambda n, m: m & IN_CLOSE_WRITE and is_ckpt_tmp(n),
    "ckpt-renamed": lambda n, m: m & IN_MOVED_TO and n == "ckpt.h5",
    "step-logged": lambda n, m: m & IN_MODIFY and n == "metrics.jsonl",
    "periodic-linked": lambda n, m: m & IN_MOVED_TO and is_periodic(n),
    "old-deleted": lambda n, m: m & IN_DELETE and is_periodic(n),
}
BEST_SAVE = lambda n, m: m & IN_CREATE and n.startswith("best.h5.tmp")  # noqa: E731


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tapegpt")
    ap.add_argument("--quick", action="store_true", help="5 kills over 20 steps (CTest)")
    ap.add_argument("--kills", type=int, help="kill points (default 25; 5 with --quick)")
    ap.add_argument("--steps", type=int, help="training steps (default 4 per kill, at least 20)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the kill schedule")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"],
                    help="the runs' --precision (bf16: oneDNN's matmuls, Note [bf16 linear])")
    a = ap.parse_args()
    robutil.require_tools()
    kills = a.kills if a.kills is not None else (5 if a.quick else 25)
    steps = a.steps if a.steps is not None else max(20, 4 * kills)
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    rnd = random.Random(seed)
    tapegpt = os.path.abspath(a.tapegpt)
    print(f"kill_anywhere: {kills} kills over {steps} steps in {a.precision}, schedule seed {seed}", flush=True)

    tmp = tempfile.mkdtemp(prefix="tapegpt-kill-")
    ok = False
    try:
        ok = kill_anywhere(tapegpt, tmp, kills, steps, rnd, a.precision)
    finally:
        if a.keep or not ok:
            print(f"kill_anywhere: files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


def kill_anywhere(tapegpt, tmp, kills, steps, rnd, precision):
    data = robutil.prepare_tiny(tapegpt, tmp)
    flags = ["--data", data, *robutil.TINY_MODEL, "--max-steps", str(steps), "--ckpt-interval", "1",
             "--eval-interval", "0", "--eval-steps", "4", "--lr-decay-steps", str(steps),
             "--dropout", "0.1", "--lr", "3e-3", "--threads", "2", "--precision", precision]

    # The reference, timed: how long start-up takes and how long one step.
    ref = os.path.join(tmp, "reference")
    os.makedirs(ref)
    watch = DirWatch(ref)
    t0 = time.monotonic()
    proc = subprocess.Popen([tapegpt, "train", *flags, "--out", ref], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    watch.wait_for(STRATEGIES["step-logged"], 1, proc, t0 + 120)
    t_first = time.monotonic() - t0
    _, err = proc.communicate(timeout=600)
    t_total = time.monotonic() - t0
    watch.close()
    if proc.returncode != 0:
        print(f"FAIL: reference run exited {proc.returncode}: {err}")
        return False
    t_step = max(1e-4, (t_total - t_first) / steps)
    print(f"reference: {t_total:.2f} s ({t_first:.2f} s to the first step, {1000 * t_step:.1f} ms a step)",
          flush=True)

    run_dir = os.path.join(tmp, "run")
    os.makedirs(run_dir)
    ckpt = os.path.join(run_dir, "ckpt.h5")
    watch = DirWatch(run_dir)
    survived, mid_save, attempts, finished = 0, 0, 0, False
    how = {}
    while not finished:
        attempts += 1
        if attempts > 10 * kills + 50:
            print("FAIL: the run never finished")
            return False
        resumed = os.path.exists(ckpt)
        cmd = [tapegpt, "train", "--resume", ckpt, "--threads", "2"] if resumed else \
              [tapegpt, "train", *flags, "--out", run_dir]
        watch.drain()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if survived < kills:
            # The last kill lands while best.h5 is saved at the final step.
            if survived == kills - 1 and kills > 1:
                strategy = "best-save"
            elif survived == 1 and kills > 2:  # a kill while old checkpoints are deleted
                strategy = "old-deleted"
            else:
                strategy = rnd.choice(["timer", "timer", *STRATEGIES])
            if strategy == "timer":
                delay = rnd.uniform(0, t_first + 3 * t_step)
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    pass
                hit = proc.poll() is None
            else:
                if strategy == "best-save":  # saved once, at the final step
                    hit = watch.wait_for(BEST_SAVE, 1, proc, start + 120)
                else:
                    # The forced old-deleted kill takes the first deletion, so
                    # it lands even when the run is near its end.
                    count = 1 if strategy == "old-deleted" else rnd.randint(1, 3)
                    hit = watch.wait_for(STRATEGIES[strategy], count, proc, start + 120)
                if hit and rnd.random() < 0.5:  # sometimes a little later in the same window
                    time.sleep(rnd.uniform(0, 0.002))
            if hit and proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.communicate(timeout=60)
                survived += 1
                how[strategy] = how.get(strategy, 0) + 1
                left = robutil.temp_files(run_dir)
                if any(n.startswith(("ckpt.h5.tmp", "best.h5.tmp")) for n in left):
                    mid_save += 1
                # Remove what the killed process left; a stale name could not
                # clash anyway (the temporary file name carries the pid).
                for n in left:
                    os.remove(os.path.join(run_dir, n))
                continue
        out, err = proc.communicate(timeout=600)
        if proc.returncode == 2 and "already finished" in err and robutil.checkpoint_step(ckpt) == steps:
            finished = True  # killed after the final checkpoint, before exiting
        elif proc.returncode != 0:
            print(f"FAIL: {'resume' if resumed else 'start'} exited {proc.returncode}:\n{err}")
            return False
        elif "done:" in out:
            finished = True
    watch.close()
    print(f"run finished after {attempts} starts; kills by moment: "
          + ", ".join(f"{k} {v}" for k, v in sorted(how.items())), flush=True)

    problems = []
    diff = robutil.state_difference(robutil.checkpoint_state(os.path.join(ref, "ckpt.h5")),
                                    robutil.checkpoint_state(ckpt))
    if diff:
        problems.append("final ckpt.h5 differs from the reference: " + diff)
    diff = robutil.state_difference(robutil.checkpoint_state(os.path.join(ref, "best.h5")),
                                    robutil.checkpoint_state(os.path.join(run_dir, "best.h5")))
    if diff:
        problems.append("best.h5 differs from the reference: " + diff)
    try:
        want = robutil.last_train_rows(os.path.join(ref, "metrics.jsonl"))
        got = robutil.last_train_rows(os.path.join(run_dir, "metrics.jsonl"))
        if sorted(got) != list(range(1, steps + 1)):
            problems.append(f"metrics.jsonl logs steps {sorted(got)}")
        bad = [s for s in want if got.get(s) != want[s]]
        if bad:
            problems.append(f"training rows differ at steps {bad[:10]}: e.g. {want[bad[0]]} vs {got.get(bad[0])}")
        if robutil.last_eval_rows(os.path.join(ref, "metrics.jsonl")) != \
           robutil.last_eval_rows(os.path.join(run_dir, "metrics.jsonl")):
            problems.append("validation losses differ")
    except ValueError as e:
        problems.append(f"metrics.jsonl does not parse (a torn line?): {e}")
    if robutil.temp_files(run_dir):
        problems.append(f"temporary files left by the finished run: {robutil.temp_files(run_dir)}")
    # --keep 2: the same two newest periodic checkpoints as the reference.
    want_periodic = periodic_files(ref)
    if periodic_files(run_dir) != want_periodic or len(want_periodic) != 2:
        problems.append(f"periodic checkpoints {periodic_files(run_dir)}, reference {want_periodic}")
    else:
        for n in want_periodic:
            diff = robutil.state_difference(robutil.checkpoint_state(os.path.join(ref, n)),
                                            robutil.checkpoint_state(os.path.join(run_dir, n)))
            if diff:
                problems.append(f"{n} differs from the reference: {diff}")
    for p in problems:
        print("FAIL:", p)
    if survived < kills:
        problems.append(f"only {survived} of {kills} kills landed before the run finished")
    print(f"kill_anywhere: survived {survived} kill points ({mid_save} left a checkpoint "
          f"half-written), {'bit-identical to the reference' if not problems else 'DIFFERENT'}")
    return not problems


if __name__ == "__main__":
    sys.exit(main())
