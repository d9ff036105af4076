"""`python3 -m workflow_sdk.testing.serve_stand_in [preset …] [--save FILE] [--replay FILE]`: the
stand-in API server (`testing.stand_in`) as a program, for a service or a test in another process.
It prints `{"url": …, "presets": […]}` as its first line, serves until its standard input
closes (or Ctrl-C), then writes the recording to `--save`'s file."""

import json

from .api_stand_in import stand_in


def main(argv=None):
    """`python3 -m workflow_sdk.testing.serve_stand_in [preset …] [--save FILE] [--replay FILE]`: serve
    until standard input closes (or Ctrl-C), printing the URL as a JSON line first."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python3 -m workflow_sdk.testing.serve_stand_in")
    parser.add_argument("presets", nargs="*")
    parser.add_argument("--save", help="write the requests and answers here when it stops")
    parser.add_argument("--replay", help="answer as this recording did")
    args = parser.parse_args(argv)
    with stand_in(*args.presets, replay=args.replay) as api:
        print(json.dumps({"url": api.url, "presets": api.presets}), flush=True)
        try:
            while sys.stdin.readline():
                pass
        except KeyboardInterrupt:
            pass
    if args.save:
        api.save(args.save)


if __name__ == "__main__":
    main()
