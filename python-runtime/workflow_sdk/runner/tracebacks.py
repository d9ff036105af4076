"""Error text and tracebacks as the session log shows them: the user's frames, not the runner's."""

import os
import traceback

SDK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def exc_text(err):
    shown = getattr(err, "__hl_shown__", None)  # an activity's exception rebuilt (activities.py)
    if isinstance(shown, str):
        return shown
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def user_frames(frames):
    """Drop the runner's own frames so a traceback shows the user's code."""
    return [f for f in frames if not f.filename.startswith(SDK_DIR)]


def format_exception(err):
    lines = ["Traceback (most recent call last):\n"]
    lines += traceback.format_list(user_frames(traceback.extract_tb(err.__traceback__)))
    lines += traceback.format_exception_only(type(err), err)
    return "".join(lines)
