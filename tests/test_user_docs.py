"""What users read speaks of the product and leads somewhere: every relative Markdown link (and
its #anchor) in README.md, docs/ and examples/ resolves to a file and a heading there, and no
user-facing file (docs, examples, prompts, the CLI's messages, the exported agent skill) refers to
our issues."""

from __future__ import annotations

import re
from pathlib import Path

from autoresearch.cli.agent_bundle import FILES

REPO = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"(?<!\\)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
_CODE = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_ISSUE = re.compile(r"\bissues?\s+#?\d+|\bthe issue\b", re.IGNORECASE)


def _markdown() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "examples").rglob("*.md"))]


def _prose(text: str) -> str:
    """The text without fenced blocks and inline code (a link written there is an example)."""
    return _CODE.sub("", _FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The #anchors of a Markdown file's headings, as GitHub makes them (a repeated one gets -1, -2 ...)."""
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(_FENCE.sub("", path.read_text())):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        seen.setdefault(f"{slug}-{count}", 1) if count else None
    return set(seen)


def test_every_relative_link_and_anchor_in_readme_docs_and_examples_resolves() -> None:
    broken = []
    for path in _markdown():
        for target in _LINK.findall(_prose(path.read_text())):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            where = f"{path.relative_to(REPO)}: ({target})"
            if not resolved.exists():
                broken.append(f"{where}: no file {resolved}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{where}: no heading #{anchor} in {resolved.relative_to(REPO)}")
    assert not broken, "\n".join(broken)


def test_the_checker_sees_headings_as_github_does(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# The contract: every job keeps\n## `run --detach` (2026-12-04)\n## Notes\n## Notes\n"
                    "```\n# not a heading\n```\n")  # fmt: skip
    assert anchors(page) == {"the-contract-every-job-keeps", "run---detach-2026-12-04", "notes", "notes-1"}


def test_user_facing_files_speak_of_the_product_not_of_our_issues() -> None:
    texts = {str(p.relative_to(REPO)): p.read_text() for p in _markdown()}
    for folder, pattern in (("examples", "*"), ("prompts", "*.md"), ("autoresearch/cli", "*.py")):
        texts.update({str(p.relative_to(REPO)): p.read_text() for p in (REPO / folder).rglob(pattern)
                      if p.is_file() and p.suffix in (".md", ".yaml", ".py", ".txt")})  # fmt: skip
    texts.update({f"skills export-agent: {name}": text for name, text in FILES.items()})
    found = [f"{name}: {m.group(0)!r}" for name, text in texts.items() for m in _ISSUE.finditer(text)]
    assert not found, "\n".join(found)


def test_the_readme_is_a_front_door_that_links_the_docs() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200, "README.md grew past 200 lines: move the detail to docs/ and link it"
    links = set(_LINK.findall(_prose(readme)))
    for page in ("docs/index.md", "docs/architecture.md", "docs/config.md", "docs/chat.md", "docs/benchmarks.md"):
        assert page in links, f"README.md does not link {page}"
    for heading in ("## Quick start", "## Main concepts", "## CLI"):
        assert f"\n{heading}\n" in readme, f"README.md lacks its {heading!r} section"
