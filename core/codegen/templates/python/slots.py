# <check-only> What the rest of run.py defines, so that this file lints on its own.
import threading
# </check-only>
class Aborted(Exception):
    """Another worker failed, so a value this one waits for will never come."""


class Slot:
    """A one-shot hand-off: put() once, get() blocks until then."""

    def __init__(self):
        self._event = threading.Event()
        self._value = None

    def put(self, value):
        self._value = value
        self._event.set()

    def get(self):
        self._event.wait()
        if self._value is None:
            raise Aborted()
        return self._value

    def abort(self):
        self._event.set()
