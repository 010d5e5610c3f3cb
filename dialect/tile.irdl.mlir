// The `tile` dialect: the single source of truth for tile ops and attributes.
//
// Loaded at run time by tile_mlir (irdl.load_dialects) and, for the cross-check,
// by upstream `mlir-opt --irdl-file=dialect/tile.irdl.mlir`. Ops print in MLIR's
// generic form. IRDL checks structure (operand kinds, the required exec_scope
// enum); the semantic rules of docs/spec.md live in the `tile-verify` pass.
irdl.dialect @tile {
  // #tile.layout<"S[(32, 4) : (1@laneid, 1)]">: which lane, warp and register
  // slot hold each logical element (docs/spec.md, "Tile layouts"). The text is checked by
  // tile-verify, which owns the layout grammar.
  irdl.attribute @layout {
    %spec = irdl.base "#builtin.string"
    irdl.parameters(spec: %spec)
  }

  // "tile.reduce"(%dst, %src) {kind | combiner, exec_scope, [axes], [accum],
  //                            [src_layout], [dst_layout], [dispatch]}
  // "tile.reduce"(%value_dst, %index_dst, %src) {kind = "argmax" | "argmin", ...}
  // The op combines either with a named `kind` ("sum", "max", "min", "maximum",
  // "minimum", "argmax", "argmin") or with `combiner = @f`, a func.func of pure
  // arith/math ops (docs/spec.md, "Combiner reductions"), never both. IRDL declares
  // neither, since it has no optional attributes: tile-verify checks them, with the
  // operand count each needs and the optional attributes' types: axes (array<i64>),
  // accum (bool), the layouts (#tile.layout), dispatch (string).
  irdl.operation @reduce {
    %dst = irdl.base "!builtin.memref"
    %src = irdl.base "!builtin.memref"
    %third = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst: %dst, src: %src, third: optional %third)
    irdl.attributes {"exec_scope" = %scope}
  }

  // "tile.reduce<k>"(%dst_0, ..., %dst_k-1, %src_0, ..., %src_k-1) {combiner = @f,
  //     exec_scope, [axes], [accum], [src_layout], [dst_layout], [dispatch]}
  // tile.reduce with k = 2 .. 8 operand pairs, combined by `combiner = @f`. Each operand
  // has its own element type. One op per k: IRDL binds all the operands of a variadic
  // group to one type, so a list of operands of different types is a list of fixed
  // length. tile-verify checks the rest, as for tile.reduce.
  irdl.operation @reduce2 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, src0: %src0, src1: %src1)
    irdl.attributes {"exec_scope" = %scope}
  }

  irdl.operation @reduce3 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %dst2 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"
    %src2 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, dst2: %dst2, src0: %src0, src1: %src1, src2: %src2)
    irdl.attributes {"exec_scope" = %scope}
  }

  irdl.operation @reduce4 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %dst2 = irdl.base "!builtin.memref"
    %dst3 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"
    %src2 = irdl.base "!builtin.memref"
    %src3 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, dst2: %dst2, dst3: %dst3, src0: %src0, src1: %src1, src2: %src2, src3: %src3)
    irdl.attributes {"exec_scope" = %scope}
  }

  irdl.operation @reduce5 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %dst2 = irdl.base "!builtin.memref"
    %dst3 = irdl.base "!builtin.memref"
    %dst4 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"
    %src2 = irdl.base "!builtin.memref"
    %src3 = irdl.base "!builtin.memref"
    %src4 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, dst2: %dst2, dst3: %dst3, dst4: %dst4, src0: %src0, src1: %src1, src2: %src2, src3: %src3, src4: %src4)
    irdl.attributes {"exec_scope" = %scope}
  }

  irdl.operation @reduce6 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %dst2 = irdl.base "!builtin.memref"
    %dst3 = irdl.base "!builtin.memref"
    %dst4 = irdl.base "!builtin.memref"
    %dst5 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"
    %src2 = irdl.base "!builtin.memref"
    %src3 = irdl.base "!builtin.memref"
    %src4 = irdl.base "!builtin.memref"
    %src5 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, dst2: %dst2, dst3: %dst3, dst4: %dst4, dst5: %dst5, src0: %src0, src1: %src1, src2: %src2, src3: %src3, src4: %src4, src5: %src5)
    irdl.attributes {"exec_scope" = %scope}
  }

  irdl.operation @reduce7 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %dst2 = irdl.base "!builtin.memref"
    %dst3 = irdl.base "!builtin.memref"
    %dst4 = irdl.base "!builtin.memref"
    %dst5 = irdl.base "!builtin.memref"
    %dst6 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"
    %src2 = irdl.base "!builtin.memref"
    %src3 = irdl.base "!builtin.memref"
    %src4 = irdl.base "!builtin.memref"
    %src5 = irdl.base "!builtin.memref"
    %src6 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, dst2: %dst2, dst3: %dst3, dst4: %dst4, dst5: %dst5, dst6: %dst6, src0: %src0, src1: %src1, src2: %src2, src3: %src3, src4: %src4, src5: %src5, src6: %src6)
    irdl.attributes {"exec_scope" = %scope}
  }

  irdl.operation @reduce8 {
    %dst0 = irdl.base "!builtin.memref"
    %dst1 = irdl.base "!builtin.memref"
    %dst2 = irdl.base "!builtin.memref"
    %dst3 = irdl.base "!builtin.memref"
    %dst4 = irdl.base "!builtin.memref"
    %dst5 = irdl.base "!builtin.memref"
    %dst6 = irdl.base "!builtin.memref"
    %dst7 = irdl.base "!builtin.memref"
    %src0 = irdl.base "!builtin.memref"
    %src1 = irdl.base "!builtin.memref"
    %src2 = irdl.base "!builtin.memref"
    %src3 = irdl.base "!builtin.memref"
    %src4 = irdl.base "!builtin.memref"
    %src5 = irdl.base "!builtin.memref"
    %src6 = irdl.base "!builtin.memref"
    %src7 = irdl.base "!builtin.memref"

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst0: %dst0, dst1: %dst1, dst2: %dst2, dst3: %dst3, dst4: %dst4, dst5: %dst5, dst6: %dst6, dst7: %dst7, src0: %src0, src1: %src1, src2: %src2, src3: %src3, src4: %src4, src5: %src5, src6: %src6, src7: %src7)
    irdl.attributes {"exec_scope" = %scope}
  }

  // "tile.copy"(%dst, %src, %i0, ..., %iN) {exec_scope, [layout], [padding],
  //                                        [alignment], [dispatch]}
  // One side a register tile (#gpu.address_space<private>), the other global or
  // workgroup memory; one index operand per memory dim: the memory coordinate of the
  // tile's origin. tile-verify checks the rest: which side is which, the index count,
  // the optional attributes' types (layout, padding of the element type, alignment
  // i64 bytes, dispatch string).
  irdl.operation @copy {
    %dst = irdl.base "!builtin.memref"
    %src = irdl.base "!builtin.memref"
    %index = irdl.is index

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta)

    irdl.operands(dst: %dst, src: %src, indices: variadic %index)
    irdl.attributes {"exec_scope" = %scope}
  }
}
