#!/usr/bin/python3
"""One flipped bit inside any dataset of a checkpoint is caught on load.

Run by CTest as: test_bitflips.py PATH/TO/tapegpt
For several datasets (weights, both AdamW moments, tokenizer bytes) of a
trained checkpoint, one bit in the middle of the dataset's middle chunk
(located with h5py's chunk info) is flipped; `eval`, `sample`,
`train --resume` and `inspect` must each exit 1 with one error line naming
the dataset, and write nothing. The untouched checkpoint still loads, and a
format_version 1 file (no checksums, as older tapegpt wrote) still loads.
"""
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robustness"))
import robutil  # noqa: E402
import testutil  # noqa: E402  (tests/support, on sys.path through robutil)

TAPEGPT = None
DATASETS = [
    "/model/transformer.wte.weight",
    "/model/transformer.h.0.attn.c_attn.weight",
    "/model/transformer.h.0.mlp.c_proj.bias",
    "/optimizer/m/transformer.h.0.mlp.c_fc.weight",
    "/optimizer/v/transformer.wpe.weight",
    "/tokenizer/token_bytes",
]


def flip_middle_bit(src, dst, dataset):
    """Copies src to dst with one bit flipped in the middle of `dataset`."""
    shutil.copy(src, dst)
    with robutil.h5py.File(dst, "r") as f:
        ds = f[dataset]
        n = ds.id.get_num_chunks()
        assert n >= 1, f"{dataset} is not chunked"
        info = ds.id.get_chunk_info(n // 2)
        offset = info.byte_offset + info.size // 2
    with open(dst, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x08]))


class BitFlips(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = testutil.class_temp_dir(cls, "tapegpt-bitflip-")
        cls.data = robutil.prepare_tiny(TAPEGPT, cls.tmp)
        cls.run_dir = os.path.join(cls.tmp, "run")
        robutil.run(TAPEGPT, "train", "--data", cls.data, *robutil.TINY_MODEL, "--max-steps", "4",
                    "--eval-interval", "2", "--eval-steps", "2", "--threads", "2", "--out", cls.run_dir)
        cls.ckpt = os.path.join(cls.run_dir, "ckpt.h5")
        cls.val = os.path.join(cls.data, "val.bin")

    def commands(self, ckpt):
        return {
            "eval": ["eval", "--ckpt", ckpt, "--tokens", self.val, "--batch-size", "4"],
            "sample": ["sample", "--ckpt", ckpt, "--max-new-tokens", "5"],
            "train": ["train", "--resume", ckpt, "--max-steps", "8", "--threads", "2"],
            "inspect": ["inspect", ckpt],
        }

    def test_every_command_refuses_a_flipped_bit_naming_the_dataset(self):
        for dataset in DATASETS:
            with self.subTest(dataset=dataset):
                d = tempfile.mkdtemp(dir=self.tmp)
                bad = os.path.join(d, "ckpt.h5")
                flip_middle_bit(self.ckpt, bad, dataset)
                for name, args in self.commands(bad).items():
                    p = robutil.run(TAPEGPT, *args, ok=False)
                    self.assertEqual(p.returncode, 1, f"{name}: {p.stderr}")
                    lines = [l for l in p.stderr.splitlines() if l.strip()]
                    self.assertEqual(len(lines), 1, f"{name}: {p.stderr}")
                    self.assertIn(f"tapegpt {name}: error: checkpoint {bad}: dataset {dataset} fails its "
                                  "Fletcher32 checksum", lines[0])
                    if name == "sample":
                        self.assertEqual(p.stdout, "", "sampled from a damaged model")
                self.assertEqual(os.listdir(d), ["ckpt.h5"], "a refused command wrote files")

    def test_the_untouched_checkpoint_loads(self):
        for name, args in self.commands(self.ckpt).items():
            if name != "train":  # resuming would advance the shared run
                robutil.run(TAPEGPT, *args)
        out = robutil.run(TAPEGPT, "inspect", self.ckpt).stdout
        self.assertIn("format_version  2", out)
        self.assertIn("match their checksums", out)

    def test_a_version_1_file_without_checksums_still_loads(self):
        old = os.path.join(self.tmp, "v1.h5")
        h5py, np = robutil.h5py, robutil.np
        with h5py.File(self.ckpt, "r") as src, h5py.File(old, "w", libver=("v108", "latest")) as dst:
            for k, v in src.attrs.items():
                dst.attrs[k] = v
            dst.attrs["format_version"] = np.int64(1)

            def copy(name, obj):
                if isinstance(obj, h5py.Group):
                    g = dst.create_group(name, track_order=True)
                    for k, v in obj.attrs.items():
                        g.attrs[k] = v
                else:  # contiguous, unfiltered: as version 1 wrote datasets
                    dst.create_dataset(name, data=obj[()])
            src.visititems(copy)
        with h5py.File(old, "r") as f:
            self.assertIsNone(f["model/transformer.wte.weight"].chunks)
        robutil.run(TAPEGPT, "eval", "--ckpt", old, "--tokens", self.val, "--batch-size", "4")
        out = robutil.run(TAPEGPT, "inspect", old).stdout
        self.assertIn("format_version  1 (no dataset checksums)", out)
        self.assertIn("no checksums to verify", out)


if __name__ == "__main__":
    TAPEGPT = os.path.abspath(sys.argv.pop(1))
    if robutil.h5py is None:  # the chunk offsets come from h5py
        robutil.no_skip.skip_or_fail("needs python3-h5py and python3-numpy to locate dataset chunks")
    unittest.main(verbosity=2)
