"""run.to_torch() against lenlab: the module's outputs equal `lenlab eval --predictions`' for every
encoding it has, in float32 and float64, at lengths inside and well past l_train; its gradient
at the first step equals lenlab's (the loss and gradient norm loss.csv logs); its hook points see
what they say; and the errors a user meets name what to do. Tiny runs (about a second each)."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import lenlab

from support import cli_train

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")
from lenlab.torch import SUPPORTED_ENCODINGS, ModelConfig, PaddedBatch, Transformer  # noqa: E402

torch.set_num_threads(1)

SMALL = dict(n_layer=2, d_model=16, n_head=2, d_ff=32, batch_size=8, steps=40, warmup_steps=5,
             eval_samples=4, seed=5)
BOS, EOS = 2, 3  # the synthetic tasks' tokens (tasks/batch.hpp)
# Inside the training range and well past it (the learned table is sized for l_test).
SCALAR = dict(task="length", l_train=6, l_test=30)
TOKEN = dict(task="copy", n_symbols=5, l_train=5, l_test=20)
LENGTHS = {"length": "3,6,30", "copy": "2,5,20"}
# to_torch's outputs against predictions.csv's (written with 17 digits): relative, per precision.
TOLERANCE = {"float32": 1e-5, "float64": 1e-10}

# Each encoding in both precisions, each precision on both kinds of head across the table.
CASES = [(pe, precision, (SCALAR, TOKEN)[(i + (precision == "float64")) % 2])
         for i, pe in enumerate(SUPPORTED_ENCODINGS) for precision in ("float32", "float64")]


def relative(ours: np.ndarray, theirs: np.ndarray) -> float:
    return float(np.max(np.abs(ours - theirs) / np.maximum(np.abs(theirs), 1e-30)))


@pytest.mark.parametrize("pe,precision,task", CASES,
                         ids=[f"{pe}-{p}-{t['task']}" for pe, p, t in CASES])
def test_to_torch_outputs_equal_lenlabs_predictions(tmp_path, pe, precision, task):
    run = lenlab.train(out=tmp_path / "run", progress=False, pe=pe, precision=precision,
                       **task, **SMALL)
    ev = run.eval(lengths=LENGTHS[task["task"]], samples=6, out=tmp_path / "ev")
    model = run.to_torch()
    assert model.dtype == (torch.float64 if precision == "float64" else torch.float32)
    p = ev.predictions
    assert len(set(p["length"].tolist())) == 3
    with torch.no_grad():
        if task["task"] == "length":
            for i, bits in enumerate(p["input"]):
                tokens = torch.tensor([[BOS] + [int(b) for b in bits] + [EOS]])
                ours = model(tokens).scalar.double().numpy()
                theirs = np.array([p["output"][i]])
                assert relative(ours, theirs) < TOLERANCE[precision], (pe, bits)
        else:
            for i, text in enumerate(p["tokens"]):
                tokens = torch.tensor([[int(t) for t in text.split()]])
                labels = [int(t) for t in p["labels"][i].split()]
                first = int(p["first_answer_row"][i])
                logits = model(tokens).logits[0, first:first + len(labels)]
                probs = torch.softmax(logits.double(), -1).numpy()
                ours = probs[np.arange(len(labels)), labels]
                theirs = np.array([float(x) for x in p["p_label"][i].split()])
                assert relative(ours, theirs) < TOLERANCE[precision], (pe, text)


def test_the_first_steps_gradient_is_lenlabs(tmp_path):
    """From the weights before the first step and that step's batch (--save-init,
    --save-batches), the module's loss and gradient norm equal loss.csv's first row (float64)."""
    settings = dict(SCALAR, pe="alibi", precision="float64", clip=0, **SMALL)
    run = cli_train(tmp_path / "run", save_init=tmp_path / "init.safetensors",
                    save_batches=tmp_path / "batches.jsonl", **settings)
    tensors = lenlab._lenlab.load_parameters(str(tmp_path / "init.safetensors"))
    model = Transformer(ModelConfig.from_run(run.config, tensors),
                        {n: torch.tensor(a) for n, a in tensors.items()})
    step = json.loads((tmp_path / "batches.jsonl").read_text().splitlines()[0])
    scalar, _ = model(PaddedBatch.from_packed(step))
    target = torch.tensor(step["scalar_targets"], dtype=torch.float64)
    weight = torch.tensor(step["scalar_weights"], dtype=torch.float64)
    loss = (weight * (scalar - target) ** 2).sum()
    loss.backward()
    norm = math.sqrt(sum(float((p.grad ** 2).sum()) for p in model.parameters()))
    assert float(loss) == pytest.approx(run.loss["loss"][0], rel=1e-10)
    assert norm == pytest.approx(run.loss["grad_norm"][0], rel=1e-10)


def test_hook_points_see_the_attention_and_the_residual_stream(tmp_path):
    run = lenlab.train(out=tmp_path / "run", progress=False, pe="rope", **SCALAR, **SMALL)
    model = run.to_torch()
    seen = {}
    model.h[0].attn.probs.register_forward_hook(lambda m, i, out: seen.__setitem__("probs", out))
    model.h[1].register_forward_hook(lambda m, i, out: seen.__setitem__("stream", out))
    tokens = torch.tensor([[BOS, 1, 0, 1, 1, EOS], [BOS, 0, 0, 1, 0, EOS]])
    with torch.no_grad():
        out = model(tokens)
        probs, stream = seen["probs"], seen["stream"]
        assert probs.shape == (2, 2, 6, 6)  # [S, H, L, L]
        torch.testing.assert_close(probs.sum(-1), torch.ones(2, 2, 6))
        assert float(probs.triu(diagonal=1).abs().max()) == 0.0  # causal: no later key
        assert stream.shape == (2, 6, 16)  # [S, L, d]: the last block's output, the head's input
        torch.testing.assert_close(model.head(model.ln_f(stream[:, -1])), out.scalar)
    assert set(model.state_dict()) == set(run.parameters)  # lenlab's names


def test_an_encoding_without_a_torch_model_is_named(tmp_path):
    run = lenlab.train(out=tmp_path / "run", progress=False, pe="bias",
                       pe_bias="-(h+1)/4*log(1+d)", **SCALAR, **SMALL)
    with pytest.raises(lenlab.UsageError, match="'bias'.*nope, learned, sinusoidal"):
        run.to_torch()


def test_an_unfinished_run_says_it_has_no_weights(tmp_path):
    run = lenlab.train(out=tmp_path / "run", progress=False, **SCALAR, **SMALL)
    (run.dir / "model.safetensors").unlink()
    with pytest.raises(lenlab.UsageError, match="no model.safetensors"):
        lenlab.torch.load(run.dir)


def test_a_folder_from_a_newer_lenlab_is_refused_naming_both_versions(tmp_path):
    run = lenlab.train(out=tmp_path / "run", progress=False, **SCALAR, **SMALL)
    manifest = json.loads((run.dir / "manifest.json").read_text())
    assert manifest["lenlab_version"] == lenlab.__version__
    manifest["lenlab_version"] = "99.0.0"
    (run.dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(lenlab.UsageError, match=f"lenlab 99.0.0, newer than this lenlab "
                                                 f"{lenlab.__version__}"):
        lenlab.load(run.dir)


def test_without_torch_the_error_says_how_to_install_it():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import lenlab\n"
            "try:\n    import lenlab.torch\nexcept ImportError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "needs PyTorch" in done.stdout and "pip install torch" in done.stdout
    # and `import lenlab` alone does not import torch
    done = subprocess.run([sys.executable, "-c", "import sys, lenlab; print('torch' in sys.modules)"],
                          capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
