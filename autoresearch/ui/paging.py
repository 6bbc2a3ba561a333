"""Server-side pagination: one page of rows, fetched as `per_page + 1` to know whether more follow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

PER_PAGE = 50
MAX_PER_PAGE = 500


@dataclass(frozen=True)
class Page(Generic[T]):
    """Rows `offset .. offset + len(items)` of a list the server holds."""

    items: Sequence[T]
    number: int
    """1-based page number."""
    per_page: int
    has_next: bool
    total: int | None = None
    """How many rows there are in all, when that is cheap to know."""

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def pages(self) -> int | None:
        return None if self.total is None else max(1, -(-self.total // self.per_page))


def page_args(page: str | None, per_page: str | None) -> tuple[int, int]:
    """(page, per_page) from query parameters; raises ValueError saying what is allowed."""
    try:
        number = int(page or 1)
        size = int(per_page or PER_PAGE)
    except ValueError:
        raise ValueError(f"page={page!r} per_page={per_page!r}: both are whole numbers (page from 1)") from None
    if number < 1 or not 1 <= size <= MAX_PER_PAGE:
        raise ValueError(f"page must be >= 1 and per_page 1-{MAX_PER_PAGE}; got page={number}, per_page={size}")
    return number, size


def fetch_page(
    fetch: Callable[[int, int], Sequence[T]], number: int, per_page: int, total: int | None = None
) -> Page[T]:
    """The page `number` of what `fetch(limit, offset)` returns."""
    rows = fetch(per_page + 1, (number - 1) * per_page)
    return Page(items=rows[:per_page], number=number, per_page=per_page, has_next=len(rows) > per_page, total=total)


def slice_page(rows: Sequence[T], number: int, per_page: int) -> Page[T]:
    """The page `number` of a list already in memory."""
    start = (number - 1) * per_page
    return Page(
        items=rows[start : start + per_page],
        number=number,
        per_page=per_page,
        has_next=len(rows) > start + per_page,
        total=len(rows),
    )
