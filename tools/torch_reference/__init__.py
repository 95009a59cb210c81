"""An independent PyTorch implementation of lenlab's model and training, for checking lenlab's
training against a framework's step by step (docs/engine.md, "Training against PyTorch").

    python3 tools/torch_reference check --lenlab build/release/lenlab -- --task passkey --pe rope ...
    python3 tools/torch_reference compare RUN_DIR      # a run trained with --save-init/--save-batches
    python3 tools/torch_reference retrain RUN_DIR --out DIR   # PyTorch's weights as a lenlab run
"""
