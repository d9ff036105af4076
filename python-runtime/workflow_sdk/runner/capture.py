"""Print capture: sys.stdout/sys.stderr writers and fd 1/2 pipes, one `print` message per line."""

import io
import os
import threading
from _thread import get_ident

MAX_LINE = 64 * 1024


def _clean(line):
    return line[:-1] if line.endswith("\r") else line


class LineWriter(io.TextIOBase):
    """A text stream that sends each complete line; partial lines wait per thread for newline/flush."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, stream, fd, sink):
        self._stream, self._fd, self._sink = stream, fd, sink
        self._bufs = {}
        self._lock = threading.Lock()
        self.buffer = _BinaryWriter(self)

    def writable(self):
        return True

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        ident = get_ident()
        with self._lock:
            lines = (self._bufs.pop(ident, "") + s).split("\n")
            if lines[-1]:
                self._bufs[ident] = lines[-1]
        for line in lines[:-1]:
            self._sink(_clean(line)[:MAX_LINE], self._stream)
        return len(s)

    def flush(self):
        with self._lock:
            rest = self._bufs.pop(get_ident(), "")
        if rest:
            self._sink(rest[:MAX_LINE], self._stream)

    def flush_all(self):
        with self._lock:
            rests, self._bufs = list(self._bufs.values()), {}
        for rest in rests:
            self._sink(rest[:MAX_LINE], self._stream)


class _BinaryWriter(io.RawIOBase):
    """`sys.stdout.buffer`: bytes decoded as UTF-8 and passed to the text writer."""

    def __init__(self, text):
        self._text = text

    def writable(self):
        return True

    def write(self, b):
        self._text.write(bytes(b).decode("utf-8", errors="replace"))
        return len(b)

    def flush(self):
        self._text.flush()


class FdCapture:
    """Pipes dup2'ed onto fds 1 and 2, pumped by threads into `sink` (os.write, subprocesses)."""

    def __init__(self, sink=None):
        # The sink may come later (a pre-forked child captures before its session exists):
        # lines until then are kept and handed over by `attach`.
        self._sink = sink
        self._early = []
        self._early_lock = threading.Lock()
        self._threads = []
        for fd, stream in ((1, "stdout"), (2, "stderr")):
            r, w = os.pipe()
            os.dup2(w, fd)
            os.close(w)
            thread = threading.Thread(target=self._pump, args=(r, stream), name=f"hl-{stream}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _pump(self, r, stream):
        pending = b""
        while True:
            try:
                chunk = os.read(r, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self._emit(_clean(line.decode("utf-8", "replace"))[:MAX_LINE], stream)
        if pending:
            self._emit(pending.decode("utf-8", "replace")[:MAX_LINE], stream)
        os.close(r)

    def _emit(self, text, stream):
        if self._sink is None:
            with self._early_lock:
                if self._sink is None:
                    self._early.append((text, stream))
                    return
        self._sink(text, stream)

    def attach(self, sink):
        with self._early_lock:
            self._sink = sink
            early, self._early = self._early, []
        for text, stream in early:
            sink(text, stream)

    def drain(self, timeout=0.5):
        """Close our write ends and wait (briefly: a subprocess may still hold them) for the pumps."""
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
        for thread in self._threads:
            thread.join(timeout)
