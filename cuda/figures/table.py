#!/usr/bin/env python3
"""Prints the figures table of cuda/README.md from a gpu-check folder's bench.json and
summary.txt (./sinew.sh gpu-check OUT writes them; this folder keeps the last H100 run).
Usage: cuda/figures/table.py [bench.json [summary.txt]]"""
import json
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
bench = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "gpu-check-h100.json")
summary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "gpu-check-h100.txt")
device = next((l.split(": ", 1)[1].strip() for l in open(summary) if l.startswith("device:")), "?")
date = next((l.split(": ", 1)[1].strip() for l in open(summary) if l.startswith("date:")), "?")


def gpu_ms(profile, which):
    for line in profile:
        m = re.search(r"profile: (\S+), (\d+) characters, \d+ steps, ([0-9.]+) ms GPU time", line)
        if m and (m.group(1) == "alone") == (which == "alone"):
            return float(m.group(3)), m.group(2)
    return float("nan"), "?"


print(f"Device: {device}; {date}. 10 PD x 10 PCG iterations, male (characters/male), "
      "200 steps (100 with collisions). GPU time: the mean per step from CUDA events around each "
      "step's launches; wall: the median time of `sinew_world_update`.\n")
print("| run | launch | alone: GPU ms/step | alone: wall ms | 64 batched: GPU ms/step | "
      "64 batched: wall ms |")
print("| --- | --- | --- | --- | --- | --- |")
for run in json.load(open(bench)):
    r = run["result"]
    a, _ = gpu_ms(r["gpu"], "alone")
    b, _ = gpu_ms(r["gpu"], "batched")
    launch = r["launch"] + (", collisions=1" if str(r["collisions"]) == "1" else "")
    print(f"| {run['run']} | {launch} | {a:.2f} | {r['alone']['wall_ms_median']:.2f} | {b:.2f} | "
          f"{r['batched']['wall_ms_median']:.2f} |")
