"""Runs a peer script inside its own virtual environment with pinned package versions.

Shared by the peer benchmarks (quality.py, crawl_scrapy.py): each keeps its own venv under
bench/cache, created and brought to its pins on first use. Progress goes to stderr, so a
script's stdout carries only its results.
"""

import os
import subprocess
import sys

_CHECK = (
    "import importlib.metadata as m, sys\n"
    "pins = {pins!r}\n"
    "bad = []\n"
    "for name, version in pins.items():\n"
    "    try:\n"
    "        if m.version(name) != version: bad.append(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        bad.append(name)\n"
    "sys.exit(1 if bad else 0)\n"
)


def reexec_in_venv(venv, pins, script):
    """Returns at once inside `venv`; otherwise creates it, installs `pins` where a version
    differs, and re-executes `script` with the same arguments there (never returns)."""
    python = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if not os.path.exists(python):
        print(f"creating {venv}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([python, "-c", _CHECK.format(pins=pins)]).returncode != 0:
        specs = [f"{name}=={version}" for name, version in pins.items()]
        print("pip install " + " ".join(specs), file=sys.stderr, flush=True)
        subprocess.run(
            [python, "-m", "pip", "install", "--disable-pip-version-check", "-q", *specs],
            check=True,
            stdout=sys.stderr,
        )
    os.execv(python, [python, os.path.abspath(script), *sys.argv[1:]])
