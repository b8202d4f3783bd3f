#!/usr/bin/python3
"""End-to-end tests of `tapegpt attention`, `tapegpt embed` and `tapegpt plot`.

A tiny char model is trained on a corpus that contains quotes, <, &, newlines
and non-ASCII characters; then: attention.json has the documented shape and
proper probabilities (rows sum to 1, the future exactly 0); every SVG is
well-formed XML (xmllint) and the page well-formed HTML (a strict check on
top of html.parser) with every token, the title and the embedded data
escaped correctly; embed and plot work and write well-formed SVG; every bad
input gets one error line, the right exit code and leaves files untouched.
Run by CTest as: test_attention_cli.py PATH/TO/tapegpt
Without xmllint the XML checks skip, except under TAPEGPT_NO_SKIP=1, where
they fail.
"""
import html.parser
import json
import re
import os
import shutil
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

TAPEGPT = None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_SKIP = os.environ.get("TAPEGPT_NO_SKIP") == "1"
MODEL = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--block-size", "64",
         "--batch-size", "4", "--warmup", "2", "--threads", "2"]
# Every character class the writers must escape, and a few non-ASCII ones.
SPECIAL = 'He said "<b>&amp;</script>" \u2014 caf\u00e9 na\u00efve \u2603\'s\n'
PROMPT = 'He said "<b>&amp;</script>" \u2014\ncaf\u00e9 \u2603'
SVG_NS = "{http://www.w3.org/2000/svg}"

sys.path.insert(0, os.path.join(REPO, "tests", "support"))
import testutil  # noqa: E402


def run(*args, ok=True):
    """tapegpt with this file's binary and time limit (testutil.run)."""
    return testutil.run(TAPEGPT, *args, ok=ok, timeout=300)


def xmllint(test, path):
    """xmllint --noout PATH must accept the file."""
    if not shutil.which("xmllint"):
        if NO_SKIP:
            test.fail("xmllint not found (TAPEGPT_NO_SKIP=1); install libxml2-utils")
        test.skipTest("xmllint not found; install libxml2-utils")
    p = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
    test.assertEqual(p.returncode, 0, f"xmllint {path}: {p.stderr}")


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class StrictHTML(html.parser.HTMLParser):
    """html.parser plus the checks it leaves out: every element closed in
    order, no stray end tag, and the text of <title>, <h1> and each <script>
    collected (html.parser unescapes entities in text, not in scripts)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.text, self.scripts = [], [], {}, []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID and tag not in ("path", "rect", "line"):
            self.errors.append(f"self-closed <{tag}/>")

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1][0] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        if not self.stack:
            if data.strip():
                self.errors.append(f"text outside <html>: {data[:40]!r}")
            return
        tag, attrs = self.stack[-1]
        if tag == "script":
            self.scripts.append((attrs, data))
        else:
            self.text[tag] = self.text.get(tag, "") + data


def parse_page(test, path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    test.assertTrue(page.startswith("<!DOCTYPE html>"))
    p = StrictHTML()
    p.feed(page)
    p.close()
    test.assertEqual(p.errors, [], "page is not well-formed")
    test.assertEqual(p.stack, [], "unclosed elements")
    return page, p


class Visualise(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-viz-")
        with open(os.path.join(REPO, "data", "tinyshakespeare.txt"), encoding="utf-8") as f:
            text = f.read()[:30000]
        corpus = os.path.join(cls.tmp, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write(text + SPECIAL * 20)
        cls.data = os.path.join(cls.tmp, "data")
        run("prepare", "--input", corpus, "--tokenizer", "char", "--out", cls.data)
        cls.run_dir = os.path.join(cls.tmp, "run")
        run("train", "--data", cls.data, "--out", cls.run_dir, *MODEL, "--max-steps", "30",
            "--lr", "3e-3", "--eval-interval", "10", "--eval-steps", "5")
        # A checkpoint path with characters the page title must escape.
        cls.ckpt = os.path.join(cls.tmp, 'best "<&>" \u00e9.h5')
        shutil.copy(os.path.join(cls.run_dir, "ckpt.h5"), cls.ckpt)
        cls.out = os.path.join(cls.tmp, "att")
        cls.stdout = run("attention", "--ckpt", cls.ckpt, "--prompt", PROMPT, "--out", cls.out,
                         "--layer", "1", "--head", "1", "--threads", "2").stdout
        with open(os.path.join(cls.out, "attention.json"), encoding="utf-8") as f:
            cls.att = json.load(f)

    def expect_error(self, args, code, must_mention):
        return testutil.assert_one_error_line(self, run(*args, ok=False), args, code, must_mention)

    # ---- attention.json ---------------------------------------------------
    def test_json_shape_and_tokens(self):
        a = self.att
        self.assertEqual(a["tokens"], list(PROMPT))  # char tokenizer: one token per character
        self.assertEqual(len(a["token_ids"]), len(PROMPT))
        self.assertTrue(all(isinstance(i, int) for i in a["token_ids"]))
        self.assertEqual((a["n_layer"], a["n_head"]), (2, 2))
        T = len(PROMPT)
        self.assertEqual(len(a["layers"]), 2)
        for layer in a["layers"]:
            self.assertEqual(len(layer), 2)
            for head in layer:
                self.assertEqual(len(head), T)
                self.assertTrue(all(len(row) == T for row in head))

    def test_json_probabilities(self):
        worst = 0.0
        for layer in self.att["layers"]:
            for head in layer:
                for i, row in enumerate(head):
                    self.assertTrue(all(p == 0.0 for p in row[i + 1:]), f"future not 0 in row {i}")
                    self.assertTrue(all(0.0 <= p <= 1.0 for p in row))
                    worst = max(worst, abs(sum(row) - 1.0))
        self.assertLessEqual(worst, 1e-6)
        # Position 0 can only see itself.
        for layer in self.att["layers"]:
            for head in layer:
                self.assertEqual(head[0][0], 1.0)

    def test_json_matches_ids_of_tokenize(self):
        p = run("tokenize", "--ckpt", self.ckpt, PROMPT)
        self.assertEqual([int(x) for x in p.stdout.split()], self.att["token_ids"])

    # ---- the SVG ----------------------------------------------------------
    def test_head_svg_well_formed_and_escaped(self):
        path = os.path.join(self.out, "layer-1-head-1.svg")
        xmllint(self, path)
        root = ET.parse(path).getroot()
        labels = {t.text for t in root.iter(SVG_NS + "text")}
        for ch in ['"', "<", "&", "\u2014", "\u00e9", "\u2603", "\u21b5", "\u2423"]:
            self.assertIn(ch, labels, f"label {ch!r} missing from the SVG")
        T = len(PROMPT)
        rects = [r for r in root.iter(SVG_NS + "rect")]
        self.assertEqual(sum(r.get("class") == "cell" for r in rects), T * (T + 1) // 2)
        self.assertEqual(sum(r.get("class") == "masked" for r in rects), T * (T - 1) // 2)
        # Hover titles carry the weights: the cell query 1 -> key 0.
        titles = [t.text for t in root.iter(SVG_NS + "title")]
        w = self.att["layers"][1][1][1][0]
        self.assertTrue(any(t.startswith("e \u2192 H:") and abs(float(t.split(":")[1]) - w) < 1e-5
                            for t in titles), titles[:3])
        for f in os.listdir(self.out):
            self.assertFalse(f.startswith("layer-0"), "only the asked head is drawn")

    # ---- the page ---------------------------------------------------------
    def test_page_well_formed_self_contained_and_escaped(self):
        page, p = parse_page(self, os.path.join(self.out, "index.html"))
        self.assertIn('best "<&>" \u00e9.h5', p.text.get("title", ""))
        self.assertIn('best "<&>" \u00e9.h5', p.text.get("h1", ""))
        data = [s for a, s in p.scripts if a.get("type") == "application/json"]
        self.assertEqual(len(data), 1)
        self.assertEqual(json.loads(data[0]), self.att)  # the page carries the exact numbers
        code = [s for a, s in p.scripts if "type" not in a]
        self.assertEqual(len(code), 1)
        self.assertTrue(all("src" not in a for a, _ in p.scripts))
        for needle in ("https://", "src=", "href=", "@import", "url(http"):
            self.assertNotIn(needle, page, "the page must not load anything")

    def test_stdout_names_files(self):
        self.assertIn("index.html", self.stdout)
        self.assertIn("layer-1-head-1.svg", self.stdout)

    # ---- attention: bad input ---------------------------------------------
    def test_attention_errors(self):
        out = os.path.join(self.tmp, "err")
        base = ["attention", "--ckpt", self.ckpt, "--out", out]
        self.expect_error(base + ["--prompt", "x" * 65], 2, "context is 64")
        self.expect_error(base + ["--prompt", "\u20ac"], 2, "--prompt")  # not in the vocabulary
        self.expect_error(base + ["--prompt", "hi", "--layer", "2", "--head", "0"], 2, "--layer")
        self.expect_error(base + ["--prompt", "hi", "--layer", "0", "--head", "-1"], 2, "--head")
        self.expect_error(base + ["--prompt", "hi", "--layer", "0"], 2, "--head")
        self.expect_error(base + ["--prompt", ""], 2, "--prompt")
        self.expect_error(["attention", "--ckpt", self.ckpt, "--prompt", "hi"], 2, "--out")
        self.expect_error(["attention", "--ckpt", os.path.join(self.tmp, "nope.h5"), "--prompt",
                           "hi", "--out", out], 1, "nope.h5")
        self.assertFalse(os.path.exists(out), "a refused command created its --out")
        afile = os.path.join(self.tmp, "a-file")
        with open(afile, "w") as f:
            f.write("mine")
        self.expect_error(["attention", "--ckpt", self.ckpt, "--prompt", "hi", "--out", afile], 2,
                          "not a directory")

    def test_attention_refuses_to_overwrite(self):
        out = os.path.join(self.tmp, "again")
        os.makedirs(out)
        mine = os.path.join(out, "index.html")
        with open(mine, "w") as f:
            f.write("my own page")
        args = ["attention", "--ckpt", self.ckpt, "--prompt", "hi", "--out", out]
        self.expect_error(args, 2, "--overwrite")
        with open(mine) as f:
            self.assertEqual(f.read(), "my own page")
        self.assertFalse(os.path.exists(os.path.join(out, "attention.json")))
        run(*args, "--overwrite")
        with open(os.path.join(out, "attention.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["tokens"], ["h", "i"])

    # ---- embed ------------------------------------------------------------
    def test_embed_nearest_and_analogy(self):
        p = run("embed", "--ckpt", self.ckpt, "--nearest", "e", "--k", "5")
        rows = [l for l in p.stdout.splitlines() if re.match(r"\s*\d+\s", l)]
        self.assertEqual(len(rows), 5, p.stdout)
        cos = [float(l.split()[-1]) for l in rows]
        self.assertEqual(cos, sorted(cos, reverse=True))
        self.assertNotIn("'e' ", "".join(rows))  # the token itself is excluded
        p = run("embed", "--ckpt", self.ckpt, "--analogy", "a", "b", "c", "--k", "3")
        rows = [l for l in p.stdout.splitlines() if re.match(r"\s*\d+\s", l)]
        self.assertEqual(len(rows), 3, p.stdout)
        for tok in ("'a'", "'b'", "'c'"):
            self.assertFalse(any(r.split()[1] == tok for r in rows), p.stdout)
        # Special characters are single tokens of this vocabulary and print safely.
        p = run("embed", "--ckpt", self.ckpt, "--nearest", "<", "--k", "2")
        self.assertIn("'<'", p.stdout)

    def test_embed_positions_svg(self):
        out = os.path.join(self.tmp, "pos.svg")
        run("embed", "--ckpt", self.ckpt, "--positions", "--out", out)
        xmllint(self, out)
        root = ET.parse(out).getroot()
        cells = [r for r in root.iter(SVG_NS + "rect") if r.find(SVG_NS + "title") is not None]
        self.assertEqual(len(cells), 64 * 64)
        self.expect_error(["embed", "--ckpt", self.ckpt, "--positions", "--out", out], 2, "--overwrite")

    def test_embed_errors(self):
        self.expect_error(["embed", "--ckpt", self.ckpt, "--nearest", "the"], 2, "3 tokens")
        self.expect_error(["embed", "--ckpt", self.ckpt, "--nearest", "\u20ac"], 2, "--nearest")
        self.expect_error(["embed", "--ckpt", self.ckpt, "--analogy", "a", "b"], 2, "three")
        self.expect_error(["embed", "--ckpt", self.ckpt], 2, "--nearest")
        self.expect_error(["embed", "--ckpt", self.ckpt, "--nearest", "a", "--analogy", "a", "b", "c"],
                          2, "not both")
        self.expect_error(["embed", "--ckpt", self.ckpt, "--nearest", "a", "--k", "0"], 2, "--k")

    # ---- plot -------------------------------------------------------------
    def test_plot_one_and_two_runs(self):
        out = os.path.join(self.tmp, "plot1.svg")
        run("plot", self.run_dir, "--out", out)
        xmllint(self, out)
        root = ET.parse(out).getroot()
        lines = {pl.get("class") for pl in root.iter(SVG_NS + "polyline")}
        self.assertEqual(lines, {"loss", "val-loss", "lr"})
        texts = "".join(t.text or "" for t in root.iter(SVG_NS + "text"))
        self.assertIn("tokens seen", texts)
        self.assertIn("loss against training time", texts)  # the third panel, from train_s
        self.assertNotIn("unknown", texts)  # ckpt.h5 gives tokens per step, metrics.jsonl train_s
        # One validation curve per panel, each with points: step, tokens, seconds.
        val = [pl.get("points").split() for pl in root.iter(SVG_NS + "polyline") if pl.get("class") == "val-loss"]
        self.assertEqual(len(val), 3)
        self.assertTrue(all(val))
        # Two runs (the second without a checkpoint: no tokens axis for it).
        other = os.path.join(self.tmp, 'run "two" <&>')
        os.makedirs(other)
        shutil.copy(os.path.join(self.run_dir, "metrics.jsonl"), other)
        out2 = os.path.join(self.tmp, "plot2.svg")
        p = run("plot", self.run_dir, other, "--out", out2)
        xmllint(self, out2)
        legend = [t.text for t in ET.parse(out2).getroot().iter(SVG_NS + "text")]
        self.assertIn(other, legend)
        self.assertEqual(p.stderr, "")

    def test_plot_wall_minutes(self):
        out = os.path.join(self.tmp, "minutes.svg")
        run("plot", self.run_dir, "--x-axis", "minutes", "--out", out)
        xmllint(self, out)
        root = ET.parse(out).getroot()
        texts = [t.text or "" for t in root.iter(SVG_NS + "text")]
        self.assertIn("loss against wall time", texts)
        self.assertNotIn("loss against step", texts)  # only the panel asked for
        val = [pl.get("points").split() for pl in root.iter(SVG_NS + "polyline") if pl.get("class") == "val-loss"]
        self.assertEqual(len(val), 1)
        with open(os.path.join(self.run_dir, "metrics.jsonl")) as f:
            evals = [r for r in map(json.loads, f) if "val_loss" in r]
        self.assertEqual(len(val[0]), len(evals))
        # The last evaluation's dot says its wall time in minutes (elapsed_s / 60).
        titles = [t.text for t in root.iter(SVG_NS + "title")]
        self.assertTrue(any(f"({evals[-1]['elapsed_s'] / 60:.4g}m wall)" in t for t in titles), titles)
        self.assertTrue(any(re.fullmatch(r"[0-9.e+-]+m", t) for t in texts), texts)  # minutes ticks
        # Several axes, in the order given, and mistakes.
        both = os.path.join(self.tmp, "both.svg")
        run("plot", self.run_dir, "-x", "minutes,step", "--out", both)
        heads = [t.text for t in ET.parse(both).getroot().iter(SVG_NS + "text")
                 if (t.text or "").startswith("loss against")]
        self.assertEqual(heads, ["loss against wall time", "loss against step"])
        bad_out = os.path.join(self.tmp, "h.svg")
        self.expect_error(["plot", self.run_dir, "--x-axis", "hours", "--out", bad_out], 2, "--x-axis")
        self.expect_error(["plot", self.run_dir, "--x-axis", "step,step", "--out", bad_out], 2, "twice")
        self.assertFalse(os.path.exists(bad_out))

    def test_plot_default_out_and_errors(self):
        run_copy = os.path.join(self.tmp, "runcopy")
        os.makedirs(run_copy)
        shutil.copy(os.path.join(self.run_dir, "metrics.jsonl"), run_copy)
        run("plot", run_copy)
        self.assertTrue(os.path.exists(os.path.join(run_copy, "loss.svg")))
        self.expect_error(["plot", run_copy], 2, "--overwrite")
        run("plot", run_copy, "--overwrite")
        self.expect_error(["plot", run_copy, self.run_dir], 2, "--out")
        self.expect_error(["plot", os.path.join(self.tmp, "missing")], 2, "not a directory")
        self.expect_error(["plot"], 2, "run directory")
        bad = os.path.join(self.tmp, "badrun")
        os.makedirs(bad)
        with open(os.path.join(bad, "metrics.jsonl"), "w") as f:
            f.write('{"step":1,"loss":3.0}\n{"step":2,"lo')
        self.expect_error(["plot", bad], 1, "line 2")
        self.assertFalse(os.path.exists(os.path.join(bad, "loss.svg")))
        self.expect_error(["plot", self.tmp], 1, "metrics.jsonl")


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
