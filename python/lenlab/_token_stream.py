"""Run.generate(..., stream=True): the tokens as an iterator, each as the engine writes it.

The engine writes in a thread of its own (it runs without the GIL and calls back with each
token's text); the iterator hands the texts over as they come. Closing it early (a `break`, or
dropping it) stops the writing at the next token.
"""

from __future__ import annotations

import queue
import threading


class _Stop(Exception):
    """Raised in the engine's callback to stop the writing: the reader went away."""


class _Raised:
    def __init__(self, error: BaseException):
        self.error = error


def token_stream(write):
    """`write(on_token)` runs the engine, calling on_token with each token's text; returns an
    iterator over those texts. An error of the engine (bad input) is raised by the iterator."""
    pieces: queue.Queue = queue.Queue()
    stop = threading.Event()
    end = object()

    def on_token(piece: str) -> None:
        if stop.is_set():
            raise _Stop()
        pieces.put(piece)

    def work() -> None:
        try:
            write(on_token)
            pieces.put(end)
        except _Stop:
            pieces.put(end)
        except BaseException as error:  # handed to the reader, raised there
            pieces.put(_Raised(error))

    thread = threading.Thread(target=work, name="lenlab-generate", daemon=True)
    thread.start()

    def texts():
        try:
            while True:
                item = pieces.get()
                if item is end:
                    return
                if isinstance(item, _Raised):
                    raise item.error
                yield item
        finally:
            stop.set()
            thread.join()

    return texts()
