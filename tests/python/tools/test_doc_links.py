"""Links between the docs stay true: every relative link of docs/ (its
subfolders too) and README.md names a file that exists, and its #anchor a
heading of that page (GitHub's slugs).  A moved section fails here until
the links into it follow.  Reads files only (well under a second)."""
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[3]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.M)


def pages():
    return sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md"]


def slug(title):
    """GitHub's anchor for a heading: the rendered text lowercased, all but
    letters, digits, '_', '-' and spaces dropped, spaces made '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link shows its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path):
    """The anchors of a page; a repeated heading's get -1, -2, ... as on GitHub."""
    seen, out = {}, set()
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    for title in HEADING.findall(text):
        s = slug(title)
        out.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    out |= set(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    return out


def links(path):
    """(target, line number) of each relative link of a page, code blocks and
    inline code left out."""
    text = path.read_text(encoding="utf-8")
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto: ...
                yield target, n


def broken():
    cache, bad = {}, []
    for page in pages():
        for target, n in links(page):
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            where = f"{page.relative_to(REPO)}:{n}: {target}"
            if not dest.exists():
                bad.append(where + " (no such file)")
            elif anchor and dest.suffix == ".md":
                if dest not in cache:
                    cache[dest] = anchors(dest)
                if anchor not in cache[dest]:
                    bad.append(where + " (no such heading)")
    return bad


def test_slug_is_githubs():
    assert slug("cuSOLVERMp 0.9.1 (`run-mp091-tests.sh`)") == "cusolvermp-091-run-mp091-testssh"
    assert slug("Shared by the GPU providers: cudacommon") == "shared-by-the-gpu-providers-cudacommon"


def test_every_relative_link_and_anchor_resolves():
    bad = broken()
    assert not bad, "broken links:\n" + "\n".join(bad)


if __name__ == "__main__":
    print("\n".join(broken()) or "all links resolve")
