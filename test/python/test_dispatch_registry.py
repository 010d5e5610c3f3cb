"""The dispatch registry (docs/spec.md, "Dispatch"), on a made-up op so the real variants stay out.

Covers: ordering by (-priority, variant), every predicate evaluated without
short-circuit, the three predicate results (bool, (ok, reason), raise), impls
that decline, a forced variant, and the per-variant error report.
"""

import pytest

from tile_mlir.dispatch import (
    Decline,
    DispatchContext,
    DispatchError,
    cases,
    dispatch,
    predicate,
    register_dispatch,
)

OP = "test.dispatch_op"


@pytest.fixture
def registry(monkeypatch):
    """A private registry for OP; what each impl did is appended to ``calls``."""
    from tile_mlir import dispatch as d

    monkeypatch.setattr(d, "_CASES", {})
    calls = []
    return calls


def ctx():
    return DispatchContext("cuda", "sm_90a")


def impl(name, calls, decline=None):
    def run(op, ctx, rewriter):
        calls.append(name)
        if decline:
            raise Decline(decline)

    return run


def test_cases_are_ordered_by_priority_then_name(registry):
    register_dispatch(OP, "cuda", variant="b", priority=10)(impl("b", registry))
    register_dispatch(OP, "cuda", variant="a", priority=10)(impl("a", registry))
    register_dispatch(OP, "cuda", variant="fast", priority=20)(impl("fast", registry))
    register_dispatch(OP, "cuda", variant="slow", priority=1)(impl("slow", registry))
    assert [c.variant for c in cases(OP, "cuda")] == ["fast", "a", "b", "slow"]
    assert dispatch(OP, None, ctx(), None) == "fast"
    assert registry == ["fast"]


def test_every_predicate_runs_and_every_reason_is_reported(registry):
    seen = []

    def p_bool(op, ctx):
        seen.append("bool")
        return False

    def p_pair(op, ctx, limit):
        seen.append("pair")
        return False, f"over {limit}"

    def p_raise(op, ctx):
        seen.append("raise")
        raise ValueError("no layout")

    register_dispatch(OP, "cuda", variant="v", priority=5, when=[
        predicate("flag", p_bool), predicate("size", p_pair, limit=8), predicate("layout", p_raise),
    ])(impl("v", registry))
    with pytest.raises(DispatchError) as e:
        dispatch(OP, None, ctx(), None)
    assert seen == ["bool", "pair", "raise"]  # no short-circuit
    assert registry == []
    msg = str(e.value)
    assert msg.startswith(f"no variant of {OP} applies (target cuda, sm_90a):")
    assert "v (prio=5): rejected: flag; size — over 8; layout — raised ValueError: no layout" in msg


def test_a_declining_impl_lets_the_search_go_on(registry):
    register_dispatch(OP, "cuda", variant="picky", priority=9)(impl("picky", registry, decline="odd shape"))
    register_dispatch(OP, "cuda", variant="plain", priority=1)(impl("plain", registry))
    assert dispatch(OP, None, ctx(), None) == "plain"
    assert registry == ["picky", "plain"]


def test_all_declined_is_reported(registry):
    register_dispatch(OP, "cuda", variant="picky", priority=9)(impl("picky", registry, decline="odd shape"))
    with pytest.raises(DispatchError, match=r"picky \(prio=9\): declined: odd shape"):
        dispatch(OP, None, ctx(), None)


def test_a_forced_variant_restricts_the_search(registry):
    register_dispatch(OP, "cuda", variant="fast", priority=20)(impl("fast", registry))
    register_dispatch(OP, "cuda", variant="plain", priority=1)(impl("plain", registry))
    assert dispatch(OP, None, ctx(), None, forced="plain") == "plain"
    assert registry == ["plain"]


def test_a_forced_unknown_variant_lists_the_registered_ones(registry):
    register_dispatch(OP, "cuda", variant="fast", priority=20)(impl("fast", registry))
    register_dispatch(OP, "cuda", variant="plain", priority=1)(impl("plain", registry))
    with pytest.raises(DispatchError, match=r'dispatch = "shared" names no variant .* registered: fast \(prio=20\), plain \(prio=1\)'):
        dispatch(OP, None, ctx(), None, forced="shared")


def test_no_variant_for_the_target(registry):
    with pytest.raises(DispatchError, match=f"no variant of {OP} is registered for target rocdl"):
        dispatch(OP, None, DispatchContext("rocdl", None), None)


def test_reregistering_a_variant_replaces_it(registry):
    register_dispatch(OP, "cuda", variant="v", priority=1)(impl("old", registry))
    register_dispatch(OP, "cuda", variant="v", priority=2)(impl("new", registry))
    assert [(c.variant, c.priority) for c in cases(OP, "cuda")] == [("v", 2)]
    dispatch(OP, None, ctx(), None)
    assert registry == ["new"]


@pytest.mark.parametrize("chip,sm", [("sm_90a", 90), ("sm_80", 80), ("sm_100a", 100), (None, None), ("gfx90a", None)])
def test_context_sm(chip, sm):
    assert DispatchContext("cuda", chip).sm == sm
