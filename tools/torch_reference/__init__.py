"""An independent PyTorch implementation of lenlab's model and training, for checking lenlab's
training against a framework's step by step (docs/engine.md, "Training against PyTorch").

    python3 tools/torch_reference check --lenlab build/release/lenlab -- --task passkey --pe rope ...
    python3 tools/torch_reference compare RUN_DIR      # a run trained with --save-init/--save-batches
    python3 tools/torch_reference retrain RUN_DIR --out DIR   # PyTorch's weights as a lenlab run

The model is the package's (lenlab.torch, what run.to_torch() returns): one PyTorch copy of
lenlab's model, trained here on lenlab's batches. lenlab is found installed, on PYTHONPATH, or in
the build folder beside the binary (LENLAB_BINARY) or at build/release.
"""

import importlib.util
import os
import pathlib
import sys


def _find_lenlab() -> None:
    if importlib.util.find_spec("lenlab") is not None:
        return
    repo = pathlib.Path(__file__).resolve().parents[2]
    binary = os.environ.get("LENLAB_BINARY", "")
    places = ([pathlib.Path(binary).resolve().parent / "python"] if binary else []) + \
        [repo / "build" / "release" / "python"]
    for place in places:
        if (place / "lenlab" / "__init__.py").is_file():
            sys.path.insert(0, str(place))
            return
    raise SystemExit("torch_reference needs the lenlab Python package (its lenlab.torch model): "
                     "pip install . (docs/python.md), or build it (scripts/test.sh) so that "
                     f"one of {', '.join(str(p) for p in places)} holds it, or set PYTHONPATH")


_find_lenlab()
