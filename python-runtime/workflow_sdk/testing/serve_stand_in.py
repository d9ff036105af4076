"""`python3 -m workflow_sdk.testing.serve_stand_in [preset …] [--save FILE] [--replay FILE]`: the
stand-in API server (`testing.stand_in`) as a program, for a service or a test in another process.
It prints `{"url": …, "presets": […]}` as its first line, serves until its standard input
closes (or Ctrl-C), then writes the recording to `--save`'s file."""

from .api_stand_in import main

if __name__ == "__main__":
    main()
