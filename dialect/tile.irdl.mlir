// The `tile` dialect: the single source of truth for tile ops and attributes.
//
// Loaded at run time by tile_mlir (irdl.load_dialects) and, for the cross-check,
// by upstream `mlir-opt --irdl-file=dialect/tile.irdl.mlir`. Ops print in MLIR's
// generic form. IRDL checks structure (operand kinds, the two required string
// enums); the semantic rules of docs/spec.md live in the `tile-verify` pass.
irdl.dialect @tile {
  // #tile.layout<"S[(32, 4) : (1@laneid, 1)]">: which lane, warp and register
  // slot hold each logical element (docs/spec.md, "Tile layouts"). The text is checked by
  // tile-verify, which owns the layout grammar.
  irdl.attribute @layout {
    %spec = irdl.base "#builtin.string"
    irdl.parameters(spec: %spec)
  }

  // "tile.reduce"(%dst, %src) {kind, exec_scope, [axes], [accum],
  //                            [src_layout], [dst_layout], [dispatch]}
  // Optional attributes cannot be declared in IRDL; tile-verify checks their
  // types: axes (array<i64>), accum (bool), the layouts (#tile.layout),
  // dispatch (string).
  irdl.operation @reduce {
    %dst = irdl.base "!builtin.memref"
    %src = irdl.base "!builtin.memref"

    %sum = irdl.is "sum"
    %max = irdl.is "max"
    %min = irdl.is "min"
    %maximum = irdl.is "maximum"
    %minimum = irdl.is "minimum"
    %kind = irdl.any_of(%sum, %max, %min, %maximum, %minimum)

    %thread = irdl.is "thread"
    %warp = irdl.is "warp"
    %warpgroup = irdl.is "warpgroup"
    %cta = irdl.is "cta"
    %cluster = irdl.is "cluster"
    %scope = irdl.any_of(%thread, %warp, %warpgroup, %cta, %cluster)

    irdl.operands(dst: %dst, src: %src)
    irdl.attributes {"kind" = %kind, "exec_scope" = %scope}
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
