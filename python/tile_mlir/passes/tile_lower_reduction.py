"""tile-lower-reduction: placeholder, replaced by the real dispatch."""
from . import PassInfo, register


def _make(chip=None, fold="linear"):
    def run(op, pass_):
        return None
    return run


register(PassInfo("tile-lower-reduction", "Lower tile.reduce through the dispatch registry", _make,
                  {"chip": "sm_XX to dispatch for when no enclosing gpu.module names one",
                   "fold": "in-thread fold order: linear (default) or tree"}))
