"""Malformed input fails fast, small and clean.

Every split chunk of ``test/tile-opt/bad-input*.mlir``, and layouts whose extents and
strides run up to 10^30, must make tile-opt exit with status 1 and a located
diagnostic (``file:line:col: error:``), never a traceback or an internal error. Each
must also be cheap: checking a layout costs O(iters), never O(extent) (docs/spec.md,
"Validity"), so no input may take 2 s or 500 MB.

Time is measured in-process, around ``tile_opt.main([...])`` on one chunk, so that the
Python and MLIR start-up is left out; the bound is two orders of magnitude above what a
chunk takes, so only a cost that grows with the input can cross it. Memory is the peak
resident size of one ``tile-opt --split-input-file`` subprocess per file (its own
``VmHWM``, which the child reports as it exits).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tile_mlir.tools import tile_opt

REPO = Path(__file__).resolve().parents[2]
TILE_OPT = REPO / "tools" / "tile-opt"
FILES = sorted((REPO / "test" / "tile-opt").glob("bad-input*.mlir"))

TIME_LIMIT_S = 2.0
MEMORY_LIMIT = 500 * 2**20
LOCATED_ERROR = re.compile(r"^[^\s:][^:]*:\d+:\d+: error: \S", re.MULTILINE)

P = "#gpu.address_space<private>"


def _has_code(chunk: str) -> bool:
    return any(line.strip() and not line.strip().startswith("//") for line in chunk.split("\n"))


def _chunks(text: str) -> list[str]:
    return [c for c in tile_opt.split_input(text) if _has_code(c)]


def _extent_inputs(k: int) -> str:
    """tile.reduce ops whose layouts hold 10^k (and -10^k) as an extent and as a
    stride, on registers and on lanes, in the shard and in the replica: one chunk each."""
    n = 10**k
    ops = []
    for scope, src, dst in [
        ("thread", f"S[{n}]", None),
        ("thread", f"S[-{n}]", None),
        ("thread", f"S[4 : 1] + R[{n} : {n}]", None),
        ("warp", f"S[({n}, {n}) : ({n}@laneid, {n})]", f"S[{n} : {n}@laneid]"),
    ]:
        layouts = f', src_layout = #tile.layout<"{src}">' + (f', dst_layout = #tile.layout<"{dst}">' if dst else "")
        types = f"memref<1xf32, {P}>, memref<4xf32, {P}>"
        ops.append(
            f"func.func @k{k}(%d: memref<1xf32, {P}>, %s: memref<4xf32, {P}>) {{\n"
            f'  "tile.reduce"(%d, %s) {{kind = "sum", exec_scope = "{scope}"{layouts}}} : ({types}) -> ()\n'
            "  return\n}\n"
        )
    return "// -----\n".join(ops)


EXTENTS = range(1, 31)


def _check_failure(status: int, err: str, what: str) -> None:
    assert status == 1, f"{what}: exit status {status}\n{err}"
    assert LOCATED_ERROR.search(err), f"{what}: no file:line:col: error:\n{err}"
    assert "Traceback" not in err and "internal error" not in err, f"{what}:\n{err}"


def _check_each_chunk(path: Path, scratch: Path, capsys) -> None:
    chunks = _chunks(path.read_text())
    assert chunks
    for i, chunk in enumerate(chunks):
        one = scratch / f"{path.stem}.chunk{i}.mlir"
        one.write_text(chunk)
        start = time.perf_counter()
        status = tile_opt.main([str(one)])
        elapsed = time.perf_counter() - start
        _check_failure(status, capsys.readouterr().err, f"{path.name} chunk {i}")
        assert elapsed < TIME_LIMIT_S, f"{path.name} chunk {i} took {elapsed:.2f} s\n{chunk}"


def _peak_memory(path: Path) -> tuple[int, str, int]:
    """(exit status, stderr, peak resident bytes) of ``tile-opt path --split-input-file``.

    The child reports its own peak, ``VmHWM`` of /proc/self/status, as it exits: the
    rusage of a child forked from this (by now large) pytest process would start at this
    process's peak, which Linux keeps across the exec."""
    err_path, peak_path = path.with_suffix(".stderr"), path.with_suffix(".peak")
    with open(err_path, "w") as err:
        child = subprocess.run([sys.executable, "-c", PEAK_OF_TILE_OPT, str(peak_path), str(TILE_OPT), str(path),
                                "--split-input-file"], stdout=subprocess.DEVNULL, stderr=err, check=False,
                               env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    return child.returncode, err_path.read_text(), int(peak_path.read_text()) * 1024  # kB


# Runs tile-opt (argv[2:]) in this process, then writes this process's VmHWM (kB) to argv[1].
PEAK_OF_TILE_OPT = """
import runpy, sys
peak_file, sys.argv = sys.argv[1], sys.argv[2:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    status = open("/proc/self/status").read()
    open(peak_file, "w").write(next(l.split()[1] for l in status.splitlines() if l.startswith("VmHWM:")))
"""


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_each_bad_input_fails_fast_and_located(path, tmp_path, capsys):
    _check_each_chunk(path, tmp_path, capsys)


def test_extents_up_to_1e30_fail_fast_and_located(tmp_path, capsys):
    """One ``main`` per k, on its four chunks (``--split-input-file``): the group's
    time bounds each chunk's, and every chunk must have an error on its own lines."""
    for k in EXTENTS:
        path = tmp_path / f"extents-1e{k}.mlir"
        path.write_text(_extent_inputs(k))
        start = time.perf_counter()
        status = tile_opt.main([str(path), "--split-input-file"])
        elapsed = time.perf_counter() - start
        err = capsys.readouterr().err
        _check_failure(status, err, path.name)
        lines = {int(m.group(1)) for m in re.finditer(r"^[^\s:][^:]*:(\d+):\d+: error: ", err, re.MULTILINE)}
        first = 1
        for i, chunk in enumerate(tile_opt.split_input(path.read_text())):
            last = chunk.count("\n") + 1
            assert lines & set(range(first, last + 1)), f"{path.name} chunk {i}: no error\n{err}"
            first = last + 2  # past the // ----- line
        assert elapsed < TIME_LIMIT_S, f"{path.name} took {elapsed:.2f} s"


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="a child reports its peak memory from /proc")
@pytest.mark.parametrize("name", [f.name for f in FILES] + ["extents"])
def test_bad_inputs_stay_under_500_mb(name, tmp_path):
    if name == "extents":
        path = tmp_path / "extents.mlir"
        path.write_text("// -----\n".join(map(_extent_inputs, EXTENTS)))
    else:
        path = tmp_path / name
        path.write_text((REPO / "test" / "tile-opt" / name).read_text())
    status, err, peak = _peak_memory(path)
    _check_failure(status, err, name)
    located = len(LOCATED_ERROR.findall(err))
    assert located >= len(_chunks(path.read_text())), f"{name}: {located} located errors\n{err}"
    assert peak < MEMORY_LIMIT, f"{name}: peak memory {peak / 2**20:.0f} MiB"


def test_the_bad_input_files_hold_at_least_30_new_inputs():
    new = [f for f in FILES if f.name != "bad-input.mlir"]
    assert sum(len(_chunks(f.read_text())) for f in new) >= 30
