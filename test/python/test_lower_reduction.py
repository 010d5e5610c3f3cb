"""tile-lower-reduction lowers each distinct op once and copies the result (its
module docstring): the copies must be exactly what lowering each op alone gives,
on each op's own operands, with each op's own location."""

import re

from mlir.passmanager import PassManager
from tile_mlir.ir import ir, make_context
from tile_mlir.passes import add_pass

PRIV = "#gpu.address_space<private>"
R1, R4 = f"memref<1xf32, {PRIV}>", f"memref<4xf32, {PRIV}>"
WARP = ('kind = "sum", exec_scope = "warp", axes = array<i64: 0>, '
        'src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">')
THREAD = 'kind = "max", exec_scope = "thread", axes = array<i64: 0>'


def _module(reduces: list[tuple[str, str, str, str, str]]) -> str:
    """A func with one line per (dst, src, dst type, src type, attributes) reduce."""
    lines = [f'  "tile.reduce"(%{d}, %{s}) {{{attrs}}} : ({dt}, {st}) -> ()' for d, s, dt, st, attrs in reduces]
    args = ", ".join(f"%{n}: {t}" for n, t in [("a", R4), ("b", R4), ("x", R1), ("y", R4), ("z", R4)])
    return f"func.func @f({args}) {{\n" + "\n".join(lines) + "\n  return\n}\n"


def _lower(text: str, **options) -> str:
    with make_context():
        module = ir.Module.parse(text)
        pm = PassManager()
        add_pass(pm, "tile-lower-reduction", **options)
        pm.run(module.operation)
        return module.operation.get_asm(enable_debug_info=True)


def _body(asm: str) -> list[str]:
    """The func body's lines, SSA names and locations normalised."""
    lines = [line.strip() for line in asm.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("func.func")) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("return"))
    return [re.sub(r"loc\(.*\)$", "loc", re.sub(r"%\w+", "%v", line)) for line in lines[start:end]]


def test_copies_equal_separate_lowerings():
    ops = [("a", "y", R4, R4, WARP), ("x", "b", R1, R4, THREAD), ("b", "z", R4, R4, WARP)]
    together = _body(_lower(_module(ops)))
    alone = [line for op in ops for line in _body(_lower(_module([op])))]
    assert together == alone
    assert "tile.reduce" not in "\n".join(together)


def test_each_copy_reads_its_own_operands():
    asm = _lower(_module([("a", "y", R4, R4, WARP), ("b", "z", R4, R4, WARP)]))
    # The args print as %arg0..%arg4 = a, b, x, y, z: each reduce loads its own src and
    # stores to its own dst.
    stores = re.findall(r"memref.store %\w+, (%arg\d)", asm)
    assert stores == ["%arg0"] * 4 + ["%arg1"] * 4
    loads = re.findall(r"memref.load (%arg\d)", asm)
    assert loads == ["%arg3"] * 4 + ["%arg4"] * 4


def test_each_copy_carries_its_own_location():
    asm = _lower(_module([("a", "y", R4, R4, WARP), ("b", "z", R4, R4, WARP)]))
    aliases = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", asm, re.MULTILINE))

    def line_of(ref: str) -> int:
        text = aliases.get(ref, ref)
        while "#loc" in text:
            text = re.sub(r"#loc\d*", lambda m: aliases[m.group(0)], text)
        return int(re.search(r'"-":(\d+):', text).group(1))

    lines = [line_of(ref) for ref in re.findall(r"gpu.shuffle.* loc\((#loc\d*)\)", asm)]
    # 4 slots x 5 butterfly steps per reduce: the first 20 shuffles are line 2's op.
    assert lines == [2] * 20 + [3] * 20


def test_a_target_llvm_cannot_build_for_is_one_error_at_its_gpu_module():
    """Two ops in a gpu.module for a chip LLVM does not know: one error, at the
    gpu.module (vocab.Target, the reading every pass shares), and the ops stay."""
    from tile_mlir.diagnostics import DiagnosticSink
    from tile_mlir.passes import TileLowerReduction
    from tile_mlir.source import new_context

    body = _module([("x", "a", R1, R4, THREAD), ("x", "b", R1, R4, THREAD)]).replace("func.func", "gpu.func")
    text = 'gpu.module @k [#nvvm.target<chip = "sm_99">] {\n' + body.replace("return", "gpu.return") + "}\n"
    with new_context() as ctx:
        sink = DiagnosticSink(ctx, {"k.mlir": text.split("\n")}, buffer="k.mlir")
        sink.keep = True
        module = ir.Module.parse(text)
        pm = PassManager("builtin.module", ctx)
        add_pass(pm, TileLowerReduction())
        try:
            pm.run(module.operation)
        except ir.MLIRError:
            pass
        assert [(str(d.where), d.message.split(";")[0]) for d in sink.kept] == [
            ("k.mlir:1:1", "'gpu.module' op LLVM's NVPTX backend knows no chip sm_99")]
        assert str(module).count('"tile.reduce"') == 2


def test_an_ops_own_fold_wins_over_the_pass_option():
    """``fold`` on the op orders that op's fold as the pass option would, whatever the
    option says: the same lowering as the option, and not the other order's."""
    sum4 = 'kind = "sum", exec_scope = "thread", axes = array<i64: 0>'
    own = {f: _body(_lower(_module([("x", "y", R1, R4, f'{sum4}, fold = "{f}"')]), fold=other))
           for f, other in (("tree", "linear"), ("linear", "tree"))}
    by_option = {f: _body(_lower(_module([("x", "y", R1, R4, sum4)]), fold=f)) for f in ("tree", "linear")}
    assert own == by_option and by_option["tree"] != by_option["linear"]
