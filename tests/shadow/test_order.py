"""QueueOrder: what the watch shows, put back in the order kube-scheduler's queue popped it."""

from __future__ import annotations

from eventsched.shadow.order import QueueOrder


def _release(order: QueueOrder[str], now: float) -> list[str]:
    out = []
    while order.any_due(now):
        chosen = order.candidates()[0]
        if order.blocked(chosen, now):
            break
        order.take(chosen)
        out.append(chosen)
    return out


def test_pods_of_one_priority_go_in_the_order_they_entered_whatever_the_watch_says() -> None:
    order: QueueOrder[str] = QueueOrder(window=0.5)
    for i, uid in enumerate("abc"):
        order.entered(uid, at=float(i) / 100)
    order.hold("c", 0, 1.00, "c")
    order.hold("a", 0, 1.01, "a")
    order.hold("b", 0, 1.02, "b")
    assert _release(order, 1.2) == []  # nothing held half a second yet
    assert _release(order, 1.6) == ["a", "b", "c"]


def test_an_outcome_waits_for_an_undecided_pod_that_entered_before_it() -> None:
    order: QueueOrder[str] = QueueOrder(window=0.5, max_wait=5.0)
    order.entered("a", 0.0)
    order.entered("b", 0.1)
    order.hold("b", 0, 1.0, "b")
    assert _release(order, 2.0) == []  # a was popped first: its outcome is coming
    order.hold("a", 0, 2.1, "a")
    assert _release(order, 2.7) == ["a", "b"]


def test_an_undecided_pod_holds_nothing_back_longer_than_max_wait() -> None:
    order: QueueOrder[str] = QueueOrder(window=0.5, max_wait=5.0)
    order.entered("stuck", 0.0)
    order.entered("b", 0.1)
    order.hold("b", 0, 1.0, "b")
    assert _release(order, 5.9) == []
    assert _release(order, 6.0) == ["b"]


def test_a_pod_of_lower_priority_or_gated_does_not_hold_one_back() -> None:
    order: QueueOrder[str] = QueueOrder(window=0.5)
    order.entered("low", 0.0, priority=-10)
    order.entered("gated", 0.0, undecided=False)
    order.entered("b", 0.1)
    order.hold("b", 0, 1.0, "b")
    assert _release(order, 1.5) == ["b"]


def test_between_priorities_the_outcome_seen_first_is_the_likeliest_the_others_candidates() -> None:
    order: QueueOrder[str] = QueueOrder(window=0.5)
    order.entered("low", 0.0)
    order.entered("high", 0.2, priority=1000)
    order.entered("late", 1.5, priority=1000)
    order.hold("low", 0, 1.0, "low")
    order.hold("high", 1000, 1.05, "high")
    order.hold("late", 1000, 1.6, "late")
    # high entered before low's outcome was seen: it may have been popped first.
    assert order.candidates() == ["low", "high"]
    order.take("high")
    # late entered after low's outcome was seen: it was popped after low.
    assert order.candidates() == ["low"]


def test_a_failed_pod_enters_the_queue_again() -> None:
    order: QueueOrder[str] = QueueOrder(window=0.5)
    order.entered("a", 0.0)
    order.entered("b", 0.1)
    order.reentered("a", 2.0)
    order.hold("a", 0, 3.0, "a")
    order.hold("b", 0, 3.1, "b")
    assert _release(order, 3.7) == ["b", "a"]


def test_a_pod_queued_behind_an_outcome_holds_nothing_back() -> None:
    """A backlog: pods that entered after b (of its priority) were popped after it."""
    order: QueueOrder[str] = QueueOrder(window=0.5)
    order.entered("b", 0.0)
    for i in range(100):
        order.entered(f"later-{i}", 0.1 + i / 1000)
    order.entered("urgent", 0.5, priority=1000)
    order.hold("b", 0, 1.0, "b")
    # urgent (higher priority, queued before b's outcome) may have gone first: b waits.
    assert _release(order, 1.6) == []
    order.hold("urgent", 1000, 1.7, "urgent")
    assert _release(order, 2.3) == ["b", "urgent"]
