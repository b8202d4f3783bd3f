# Skips that cannot hide in CI: scripts/test.sh (what CI runs) exports
# TAPEGPT_NO_SKIP=1 after installing every tool the tests use, so there a
# test that would skip for a missing tool or permission fails instead. A
# person running one test by hand without the variable still gets a skip.
"""skip_or_fail(reason) for scripts, skip_test_or_fail(case, reason) for unittest."""
import os
import sys

# Exit code CTest treats as "skipped" (SKIP_RETURN_CODE 77).
SKIP = 77


def strict():
    """True when skipping is not allowed (TAPEGPT_NO_SKIP=1)."""
    return os.environ.get("TAPEGPT_NO_SKIP") == "1"


def skip_or_fail(reason):
    """Ends the script: exit 77 (skipped), or exit 1 under TAPEGPT_NO_SKIP=1."""
    if strict():
        print(f"FAIL: {reason} (TAPEGPT_NO_SKIP=1: skipping is not allowed here)", flush=True)
        sys.exit(1)
    print(f"skipped: {reason}", flush=True)
    sys.exit(SKIP)


def skip_test_or_fail(case, reason):
    """unittest's skipTest, or a failure under TAPEGPT_NO_SKIP=1."""
    if strict():
        case.fail(f"{reason} (TAPEGPT_NO_SKIP=1: skipping is not allowed here)")
    case.skipTest(reason)
