"""`python -m workflow_sdk.runner serve|check|version`."""

import argparse
import json
import os
import platform
import sys


def _parser():
    parser = argparse.ArgumentParser(prog="python -m workflow_sdk.runner")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the fork server")
    serve.add_argument("--socket", required=True)
    serve.add_argument("--preload", default="")
    serve.add_argument("--spares", type=int, default=None, help="pre-forked children kept ready (default 2)")
    serve.add_argument("--warm-dir", default=None, help="a project folder to import before forking")
    serve.add_argument("--warm-modules", default="", help="comma-separated modules of --warm-dir to import")
    for flag, what in (
        ("--memory-mib", "memory of each session process, MiB (a memory cgroup, else address space)"),
        ("--files", "open files of each session process"),
        ("--cpu-seconds", "CPU seconds of each session process"),
        ("--processes", "processes and threads of each session (where a pids cgroup is writable)"),
    ):
        serve.add_argument(flag, type=int, default=0, help=f"{what} (0: no limit)")
    serve.add_argument(
        "--priority",
        choices=("idle", "low", "normal"),
        default="low",
        help="CPU priority of sessions: idle (SCHED_IDLE), low (nice 5, the default), normal",
    )
    check = sub.add_parser("check", help="check a project without importing it")
    check.add_argument("--dir", required=True)
    check.add_argument("--call", action="append", default=[])
    sub.add_parser("version", help="print the Python and SDK versions")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)  # usage errors exit 2
    if args.command == "version":
        from workflow_sdk import __version__

        print(json.dumps({"python": platform.python_version(), "sdk": __version__}, separators=(",", ":")))
        return 0
    if args.command == "check":
        if not os.path.isdir(args.dir):
            print(f"check: {args.dir} is not a directory", file=sys.stderr)
            return 2
        from .check import check

        errors = check(args.dir, args.call)
        print(
            json.dumps({"ok": True} if not errors else {"ok": False, "errors": errors}, separators=(",", ":"))
        )
        return 0
    from .forkserver import SPARES, serve
    from .limits import Limits

    preload = [m.strip() for m in args.preload.split(",") if m.strip()]
    warm = [m.strip() for m in args.warm_modules.split(",") if m.strip()]
    spares = SPARES if args.spares is None else max(1, args.spares)
    return serve(
        args.socket,
        preload,
        spares=spares,
        warm_dir=args.warm_dir,
        warm_modules=warm,
        limits=Limits(
            memory_mib=args.memory_mib,
            files=args.files,
            cpu_seconds=args.cpu_seconds,
            processes=args.processes,
            priority=args.priority,
        ),
    )
