"""Lowering variants of tile ops. Importing this package registers them.

``registers`` holds what the register variants share (the register iteration
plan, the in-thread folds, accum and the store); each variant module holds its
predicates and the one step that makes it different. ``shared`` reduces tiles in
workgroup memory with the same plan, folds and finish; ``cluster`` reduces across the
CTAs of a thread-block cluster, on top of ``cross_warp``'s exchange. ``copy`` (with ``copy_plan`` and
``copy_facts``) lowers ``tile.copy``.
"""

from . import cluster, cluster_push, copy, cross_warp, local, local_redux, shared, sm100_packed  # noqa: F401
