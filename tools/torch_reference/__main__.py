"""`python3 tools/torch_reference ...` (or `python3 -m torch_reference` with tools/ on the path)."""
import pathlib
import sys

if __package__ in (None, ""):  # run as a folder: make the package importable by its name
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    from torch_reference.cli import main
else:
    from .cli import main

sys.exit(main())
