# The Debian forky folder of scripts/setup_forky.sh, for the tests that run
# real clients in it (forky's transformers, PyTorch, llama.cpp tools and
# Node.js): why it cannot be used here, and a command line that runs a
# program inside it through scripts/in_forky.sh (the repository and /tmp are
# at the same paths inside, so a test passes its usual absolute paths).
"""why_not(*programs) says why the folder cannot run them (None if it can);
command(*args) is the argv that runs args inside it; run(*args) runs it."""
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FOLDER = os.environ.get("TAPEGPT_FORKY", "/var/cache/tapegpt/forky")
IN_FORKY = os.path.join(REPO, "scripts", "in_forky.sh")
STAMP = os.path.join(FOLDER, ".tapegpt-forky-stamp")  # written last by setup_forky.sh


def why_not(*programs):
    """Why the forky folder cannot run `programs` here, or None."""
    if not os.path.isfile(STAMP):
        return f"no complete forky folder at {FOLDER} (run scripts/setup.sh, or scripts/setup_forky.sh)"
    for p in programs:
        if not any(os.path.isfile(os.path.join(FOLDER, d.lstrip("/"), p)) for d in ("/usr/bin", "/bin")):
            return f"{p} is not installed in the forky folder {FOLDER} (run scripts/setup_forky.sh)"
    return None


def command(*args):
    """The argv that runs args inside the forky folder."""
    return [IN_FORKY, *args]


def run(*args, timeout=600, **kw):
    """subprocess.run of args inside the folder, text output captured."""
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout, **kw)
