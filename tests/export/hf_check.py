# Loads a Hugging Face directory written by `tapegpt export --format hf` in
# real transformers (Debian forky's, run inside the forky folder by
# test_real_clients.py) and measures it: its tokenizer's ids of a text, and
# the summed next-token NLL over given windows.
#
#   python3 hf_check.py JOB.json   → one JSON object on stdout
# JOB.json: {"dir": the exported directory, "text": "...", "windows": [[ids],
#            ...] (each window: its inputs then the last target), "threads": 2}
# Output: {"ids": AutoTokenizer's ids of text (no special tokens added),
# "nll": [per window, the summed -log p(target)], "targets": how many,
# "architectures": the loaded model's class, "transformers", "torch": their
# versions}. The forward runs in float32, as the exported weights are; the
# log-softmax and the sums in float64. The checks are the caller's.
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is in the directory: never the network
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

with open(sys.argv[1], encoding="utf-8") as f:
    job = json.load(f)
torch.set_num_threads(job.get("threads", 2))
tokenizer = AutoTokenizer.from_pretrained(job["dir"])
model = AutoModelForCausalLM.from_pretrained(job["dir"], dtype=torch.float32)
model.eval()
nll, targets = [], 0
with torch.no_grad():
    for w in job["windows"]:
        logits = model(torch.tensor([w[:-1]])).logits[0].double()
        logp = torch.log_softmax(logits, dim=-1)
        picked = logp[torch.arange(len(w) - 1), torch.tensor(w[1:])]
        nll.append(-picked.sum().item())
        targets += len(w) - 1
print(json.dumps({"ids": tokenizer.encode(job["text"], add_special_tokens=False), "nll": nll, "targets": targets,
                  "architectures": type(model).__name__, "transformers": transformers.__version__,
                  "torch": torch.__version__}))
