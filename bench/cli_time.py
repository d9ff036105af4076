"""Start-up of commands: `python cli_time.py RUNS -- cmd args... -- cmd args...` prints one JSON list,
per command its best wall time and median CPU time (user + system, from RUSAGE_CHILDREN) in ms."""

import json
import resource
import statistics
import subprocess
import sys
import time


def measure(cmd, runs):
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append((time.perf_counter() - t) * 1e3)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1e3)
    return {"cmd": cmd, "best_wall_ms": min(walls), "median_cpu_ms": statistics.median(cpus)}


if __name__ == "__main__":
    runs = int(sys.argv[1])
    commands, current = [], None
    for arg in sys.argv[2:]:
        if arg == "--":
            current = []
            commands.append(current)
        else:
            current.append(arg)
    print(json.dumps([measure(cmd, runs) for cmd in commands]))
