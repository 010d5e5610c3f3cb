"""No input ends the process: every MLIR example of the repository (examples/*.mlir and the
```mlir blocks of docs/*.md), with its ``#nvvm.target`` stripped of its chip (MLIR's
default, sm_50) and with ``chip = "sm_50"``, through ``tile-opt --tile-to-ptx`` and
``tile_mlir.compile(..., backend="cuda")``, ends in success or an error: exit status 0
or 1, never a signal.

The cases run in one worker process, in-process (each compile's LLVM stage runs in a
child process of its own, ``pipeline.child``), so that a regression kills the worker, and
this test names the case it was running, instead of killing pytest.
"""

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TILE_OPT = REPO / "tools" / "tile-opt"

_CHIP = re.compile(r'chip\s*=\s*"[^"]*"\s*,?\s*')


def examples() -> dict[str, str]:
    """Every MLIR example: name -> text. The fused kernels come at a second shape too
    (several warps per row: cta-scope reductions)."""
    found = {f"examples/{p.name}": p.read_text() for p in sorted((REPO / "examples").glob("*.mlir"))}
    for doc in sorted((REPO / "docs").glob("*.md")):
        for i, block in enumerate(re.findall(r"```mlir\n(.*?)```", doc.read_text(), re.S)):
            found[f"docs/{doc.name}#{i}"] = block
    from tile_mlir.kernels.__main__ import emitted

    for name in ("softmax", "rmsnorm", "layernorm", "logsumexp"):
        found[f"examples/{name}.mlir at 8x8192"] = emitted(name, 8, 8192, "f32")
    return found


def strip_chip(text: str) -> str:
    """Each ``#nvvm.target`` without its chip: ``#nvvm.target<chip = "sm_90a">`` ->
    ``#nvvm.target``."""
    def strip(m):
        params = _CHIP.sub("", m.group(1)).strip().rstrip(",")
        return f"#nvvm.target<{params}>" if params else "#nvvm.target"
    return re.sub(r"#nvvm\.target<([^>]*)>", strip, text)


def with_chip(text: str, chip: str) -> str:
    """Each ``#nvvm.target`` naming ``chip``."""
    text = strip_chip(text)
    text = re.sub(r"#nvvm\.target<", f'#nvvm.target<chip = "{chip}", ', text)
    return re.sub(r"#nvvm\.target(?!<)", f'#nvvm.target<chip = "{chip}">', text)


def cases() -> dict[str, str]:
    out = {}
    for name, text in examples().items():
        for variant, changed in (("no chip", strip_chip(text)), ("sm_50", with_chip(text, "sm_50"))):
            if changed not in out.values():
                out[f"{name} ({variant})"] = changed
    return out


# Runs each case in-process, one JSON line per case and tool, before and after.
WORKER = textwrap.dedent("""
    import json, os, sys, tempfile
    sys.path.insert(0, sys.argv[1])
    import tile_mlir
    from tile_mlir.tools import tile_opt
    cases = json.load(sys.stdin)
    out = os.path.join(tempfile.mkdtemp(), "out.ptx")
    for name, text in cases.items():
        path = os.path.join(tempfile.mkdtemp(), "in.mlir")
        with open(path, "w") as f:
            f.write(text)
        print(json.dumps({"case": name, "tool": "tile-opt", "started": True}), flush=True)
        rc = tile_opt.main([path, "--tile-to-ptx", "-o", out])
        print(json.dumps({"case": name, "tool": "tile-opt", "rc": rc}), flush=True)
        print(json.dumps({"case": name, "tool": "compile", "started": True}), flush=True)
        try:
            tile_mlir.compile(text, backend="cuda", cache=False)
            rc = 0
        except tile_mlir.TileError:
            rc = 1
        except Exception as e:
            rc = f"{type(e).__name__}: {e}"
        print(json.dumps({"case": name, "tool": "compile", "rc": rc}), flush=True)
""")


def test_the_variants_change_the_targets():
    text = '[#nvvm.target<chip = "sm_90a", features = "+ptx88">] [#nvvm.target<chip = "sm_80">] [#nvvm.target]'
    assert strip_chip(text) == '[#nvvm.target<features = "+ptx88">] [#nvvm.target] [#nvvm.target]'
    assert with_chip(text, "sm_50") == ('[#nvvm.target<chip = "sm_50", features = "+ptx88">] '
                                        '[#nvvm.target<chip = "sm_50">] [#nvvm.target<chip = "sm_50">]')


def test_no_example_ends_the_process_with_a_signal(tmp_path):
    todo = cases()
    assert len([n for n in todo if n.startswith("examples/")]) >= 2 * 15
    run = subprocess.run([sys.executable, "-c", WORKER, str(REPO / "python")], input=json.dumps(todo),
                         capture_output=True, text=True, timeout=900, check=False)
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    last = lines[-1] if lines else None
    assert run.returncode == 0, f"the worker died ({run.returncode}) running {last}:\n{run.stderr[-3000:]}"
    results = {(r["case"], r["tool"]): r["rc"] for r in lines if "rc" in r}
    assert len(results) == 2 * len(todo)
    assert {key: rc for key, rc in results.items() if rc not in (0, 1)} == {}
    # the case: warp_sum without a chip is an error, not a signal
    assert results[("examples/warp_sum.mlir (no chip)", "tile-opt")] == 1
    assert results[("examples/warp_sum.mlir (no chip)", "compile")] == 1


def test_tile_opt_reports_a_shuffle_for_sm50_instead_of_aborting(tmp_path):
    """The command line itself (issue: SIGABRT, status 134, before the fix)."""
    path = tmp_path / "warp_sum.mlir"
    path.write_text(strip_chip((REPO / "examples" / "warp_sum.mlir").read_text()))
    run = subprocess.run([sys.executable, str(TILE_OPT), str(path), "--tile-to-ptx"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 1, run.stderr
    assert f"{path}:10:7: error: 'nvvm.shfl.sync' op needs sm_30 and PTX ISA 6.0" in run.stderr
    assert "LLVM ERROR" not in run.stderr


def test_a_fatal_llvm_error_is_a_compile_error_and_python_lives_on():
    """An intrinsic that tile-check-target does not know (activemask needs PTX ISA 6.2):
    LLVM aborts in the child process, and compile raises a CompileError with its words."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import tile_mlir
        text = '''module attributes {gpu.container_module} {
          gpu.module @kernels [#nvvm.target<chip = "sm_60">] {
            gpu.func @k(%A: memref<32xi32>) kernel {
              %c0 = arith.constant 0 : index
              %m = llvm.call_intrinsic "llvm.nvvm.activemask"() : () -> i32
              memref.store %m, %A[%c0] : memref<32xi32>
              gpu.return
            }
          }
        }'''
        try:
            tile_mlir.compile(text, backend="cuda", cache=False)
        except tile_mlir.CompileError as e:
            print("stage:", e.stage)
            print(e.message)
        # the worker that died is replaced: the next compile works
        from tile_mlir.compiler import lower_to_ptx
        print("next:", ".entry demo" in lower_to_ptx(open(sys.argv[2]).read()).ptx)
        print("alive")
    """)
    run = subprocess.run([sys.executable, "-c", script, str(REPO / "python"), str(REPO / "examples" / "demo.mlir")],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "stage: gpu-module-to-binary" in run.stdout
    assert "next: True" in run.stdout
    assert "LLVM stopped the compile (killed by SIGABRT)" in run.stdout
    assert "Cannot select: intrinsic %llvm.nvvm.activemask" in run.stdout
    assert run.stdout.rstrip().endswith("alive")


def _compile_demo(_):
    from tile_mlir.compiler import lower_to_ptx

    return lower_to_ptx((REPO / "examples" / "demo.mlir").read_text()).ptx


def test_a_forked_process_compiles_with_a_worker_of_its_own():
    """A process forked after the LLVM worker started (multiprocessing's fork) must not
    share the worker's pipes with its parent: it starts its own."""
    import multiprocessing

    first = _compile_demo(0)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map(_compile_demo, range(4)) == [first] * 4
    assert _compile_demo(0) == first


def test_the_chip_table_is_what_llvm_writes():
    """vocab.CHIP_PTX (what tile-check-target compares against) is the PTX ISA LLVM
    writes for each chip it knows, where the target's features name none."""
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.vocab import CHIP_PTX

    demo = (REPO / "examples" / "demo.mlir").read_text()
    written = {}
    for chip in CHIP_PTX:
        ptx = lower_to_ptx(with_chip(demo, chip)).ptx
        major, minor = re.search(r"^\.version (\d+)\.(\d)$", ptx, re.M).groups()
        written[chip] = int(major) * 10 + int(minor)
    assert written == CHIP_PTX
