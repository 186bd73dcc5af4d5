"""A Coscheduling gang of 3 with minMember 3 where one member cannot fit (tests/chainlogs.py:
the real Scheduler over the simulated cluster, still running while the log is read), and the
example's gangs through `eventsched simulate`: `explain` (text and --json) names the members
that block the gang and why, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

from eventsched.audit import explain_pod
from eventsched.audit.gang import BOUND, REJECTED, UNSCHEDULABLE, WAITING, load_gang
from eventsched.cli.explain import render
from eventsched.cli.main import main
from eventsched.events import EventStore
from tests.chainlogs import blocked_gang
from tests.cli.test_cli import ROOT, eventsched

NO_ROOM = (
    "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
    "2 No preemption victims found for incoming pod.."
)


def explain_json(db_url: str, pod: str) -> dict:
    done = eventsched("explain", pod, "--json", db=db_url)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_two_members_wait_at_permit_and_the_third_blocks(db_url: str) -> None:
    with blocked_gang(db_url), EventStore.connect(db_url) as store:
        explained = explain_pod(store, "ml", "ring-0")
        gang = explained.gang
        assert gang is not None and (gang.key, gang.min_member) == ("ml/ring", 3)
        assert [(m.name, m.state) for m in gang.members] == [
            ("ring-0", WAITING),
            ("ring-1", WAITING),
            ("ring-2", UNSCHEDULABLE),
        ]
        waiting = gang.members[:2]
        assert sorted(m.node or "" for m in waiting) == ["rack-1", "rack-2"]
        assert not any(m.blocking for m in waiting)
        (blocker,) = gang.blockers
        assert (blocker.name, blocker.message, blocker.attempts) == ("ring-2", NO_ROOM, 1)
        assert gang.summary == (
            "not complete: 2 of minMember 3 hold a node (0 bound, 2 waiting at Permit); "
            "blocked by ring-2 (unschedulable)"
        )
        lines = render(explained).splitlines()
        start = lines.index(f"  Gang ml/ring (Coscheduling pod group), {gang.summary}")
        assert lines[start + 1].startswith(
            f"    ml/ring-0: waiting at Permit on {waiting[0].node} since "
        )
        assert lines[start + 3].startswith("    ml/ring-2: blocks the gang: unschedulable since ")
        assert lines[start + 3].endswith(f", 1 attempt(s): {NO_ROOM}")
        # Every member's explanation shows the same gang; the JSON has it whole.
        assert explain_pod(store, "ml", "ring-2").gang == gang
        out = explain_json(db_url, "ml/ring-1")
        assert out["gang"]["min_member"] == 3 and out["gang"]["summary"] == gang.summary
        assert [(m["name"], m["state"], m["blocking"]) for m in out["gang"]["members"]] == [
            ("ring-0", WAITING, False),
            ("ring-1", WAITING, False),
            ("ring-2", UNSCHEDULABLE, True),
        ]


def test_with_postfilter_the_waiting_members_are_rejected_with_the_gang(db_url: str) -> None:
    with blocked_gang(db_url, post_filter=True), EventStore.connect(db_url) as store:
        gang = load_gang(store, "ml", "ring")
        assert gang is not None
        assert [(m.name, m.state, m.message) for m in gang.members[:2]] == [
            ("ring-0", REJECTED, "optimistic rejection in PostFilter"),
            ("ring-1", REJECTED, "optimistic rejection in PostFilter"),
        ]
        assert [m.name for m in gang.blockers] == ["ring-2"]
        assert gang.blockers[0].message.endswith(
            "PodGroup ml/ring gets rejected due to Pod ring-2 is unschedulable even after "
            "PostFilter."
        )
        assert gang.summary == (
            "not complete: 0 of minMember 3 hold a node (0 bound, 0 waiting at Permit); "
            "blocked by ring-2 (unschedulable); rejected at Permit with the gang: ring-0, ring-1"
        )


def test_the_example_gangs_one_complete_one_too_small(db_url: str) -> None:
    """examples/coscheduling: train (4 of minMember 4) is bound; tune has 3 pods for
    minMember 4, so each is turned away at PreFilter."""
    profile = str(ROOT / "examples" / "profiles" / "coscheduling.yaml")
    example = str(ROOT / "examples" / "coscheduling")
    assert main(["simulate", "--config", profile, example, "--db", db_url]) == 0
    with EventStore.connect(db_url) as store:
        train = explain_pod(store, "shop", "train-2").gang
        tune = explain_pod(store, "shop", "tune-0").gang
    assert train is not None and train.complete
    assert train.summary == "complete: 4 of minMember 4 bound"
    assert {m.state for m in train.members} == {BOUND} and not train.blockers
    assert tune is not None and not tune.complete and tune.min_member == 4
    assert tune.summary.startswith(
        "not complete: 0 of minMember 4 hold a node (0 bound, 0 waiting at Permit); "
        "3 member(s) exist, 1 too few; blocked by tune-0 (unschedulable), "
    )
    assert all(
        "pod group shop/tune has 3 pods, fewer than minAvailable 4" in m.message
        for m in tune.blockers
    )


def test_a_pod_outside_any_gang(db_url: str) -> None:
    assert main(["simulate", str(ROOT / "examples" / "preemption"), "--db", db_url]) == 0
    with EventStore.connect(db_url) as store:
        assert explain_pod(store, "shop", "checkout").gang is None
        assert load_gang(store, "shop", "nope") is None
