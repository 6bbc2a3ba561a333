"""The output bound: what is cut, how it is marked, and that the result still validates."""

from __future__ import annotations

from skills import SkillOutput, bound_output, cut_middle, output_size


class Item(SkillOutput):
    name: str
    """A name."""


class Report(SkillOutput):
    title: str
    """Short, never cut."""
    body: str
    """Long text."""
    items: list[Item]
    """Many items."""


def test_fitting_output_is_returned_unchanged() -> None:
    report = Report(title="t", body="b", items=[])
    assert bound_output(report, 1000) is report


def test_the_largest_part_is_cut_first_with_markers() -> None:
    report = Report(title="t" * 50, body="x" * 5000, items=[Item(name=f"item-{i}") for i in range(20)])
    bounded = bound_output(report, 2000)
    assert output_size(bounded) <= 2000 and bounded.truncated
    assert bounded.title == report.title and len(bounded.items) == 20  # only the long string was cut
    assert bounded.body.startswith("xxx") and bounded.body.endswith("xxx") and "chars cut ...]" in bounded.body
    assert bounded.truncation.startswith("body: ") and bounded.truncation.endswith("(output bound 2000 bytes)")


def test_lists_lose_items_from_the_end_and_say_how_many() -> None:
    report = Report(title="t", body="b", items=[Item(name=f"item-{i:04d}") for i in range(1000)])
    bounded = bound_output(report, 3000)
    kept = len(bounded.items)
    assert 0 < kept < 1000 and [i.name for i in bounded.items] == [f"item-{i:04d}" for i in range(kept)]
    assert f"items: {1000 - kept} of 1000 items cut" in bounded.truncation


def test_cut_middle_keeps_both_ends() -> None:
    text = "start-" + "y" * 1000 + "-end"
    cut = cut_middle(text, 100)
    assert cut.startswith("start-") and cut.endswith("-end") and len(cut) <= 100
    assert "[... " in cut and cut_middle("short", 100) == "short"
