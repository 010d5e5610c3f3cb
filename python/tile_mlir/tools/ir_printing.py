"""tile-opt's IR printing: mlir-opt's ``--mlir-print-ir-*`` flags on the bindings.

``IRPrinting`` holds what the flags ask for, ``enable_ir_printing`` turns on the
bindings' IR printing of a pass manager, and ``selected_dumps`` keeps only the dumps of
the passes named in ``--mlir-print-ir-before=``/``-after=`` (the bindings print before or
after every pass), by sending file descriptor 2 to a temporary file during the run.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass

from mlir.passmanager import PassManager


@dataclass(frozen=True)
class IRPrinting:
    """When to print the IR around passes, as mlir-opt's ``--mlir-print-ir-*`` flags say.

    ``before``/``after`` name passes by argument (``cse``, ``tile-lower-reduction``).
    The bindings' ``PassManager.enable_ir_printing`` prints before or after *every*
    pass; ``selected_dumps`` keeps only the dumps of the named ones.
    """

    before_all: bool = False
    after_all: bool = False
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    after_change: bool = False  # print after a pass only if it changed the IR
    after_failure: bool = False  # print after a pass only if it failed
    module_scope: bool = False  # print the top-level op, not the op the pass ran on
    debug_info: bool = False
    generic: bool = False

    def keeps(self, when: str, argument: str) -> bool:
        """Whether the dump ``when`` ("Before"/"After") the pass ``argument`` is wanted."""
        if when == "Before":
            return self.before_all or argument in self.before
        return self.after_all or self.after_failure or argument in self.after

    @property
    def selective(self) -> bool:
        """Whether some dumps must be dropped (a pass list without its ``-all``)."""
        return bool(self.before and not self.before_all
                    or self.after and not (self.after_all or self.after_failure))


def enable_ir_printing(pm: PassManager, printing: IRPrinting) -> None:
    """Turn on the bindings' IR printing on ``pm`` as ``printing`` asks."""
    before = printing.before_all or bool(printing.before)
    after = printing.after_all or printing.after_failure or bool(printing.after)
    if before or after:
        pm.enable_ir_printing(
            print_before_all=before, print_after_all=after,
            print_module_scope=printing.module_scope, print_after_change=printing.after_change,
            print_after_failure=printing.after_failure, enable_debug_info=printing.debug_info,
            print_generic_op_form=printing.generic)


# "// -----// IR Dump After CSE (cse) ('func.func' operation: @f) //----- //"
_DUMP_HEADER = re.compile(r"// -----// IR Dump (Before|After) .*?\(([^()]+)\)(?: \('.*)? //----- //")


@contextmanager
def selected_dumps(printing: IRPrinting):
    """Around a pass-manager run: keep only the IR dumps ``printing`` selects.

    The pass manager writes its dumps straight to file descriptor 2. When some must be
    dropped, that descriptor goes to a temporary file during the run (Python's
    ``sys.stderr``, and so the diagnostics, still reach the terminal), and afterwards
    the wanted dumps are copied to stderr: they come after the run's diagnostics.
    """
    if not printing.selective:
        yield
        return
    sys.stderr.flush()
    terminal = os.dup(2)
    saved_stderr = sys.stderr
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        sys.stderr = open(os.dup(terminal), "w", encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            yield
        finally:
            sys.stderr.close()
            sys.stderr = saved_stderr
            os.dup2(terminal, 2)
            os.close(terminal)
            captured.seek(0)
            sys.stderr.write(_keep_dumps(captured.read().decode(errors="replace"), printing))
            sys.stderr.flush()


def _keep_dumps(text: str, printing: IRPrinting) -> str:
    """The wanted dumps of ``text``; each runs from its header to the next one."""
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        header = _DUMP_HEADER.match(line)
        if header:
            keep = printing.keeps(*header.groups())
        if keep:
            kept.append(line)
    return "".join(kept)
