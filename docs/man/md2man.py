#!/usr/bin/env python3
"""Turns one of the project's Markdown pages into a man page (roff, man macros).

    md2man.py INPUT.md OUTPUT NAME SECTION "one-line description" VERSION

Handles what docs/*.md use: headings, paragraphs, fenced code, tables,
bullet and numbered lists, `code`, **bold**, *emphasis* and [links](...).
The first "# Title" line becomes the NAME section; "## X" a section (.SH),
"### X" a subsection (.SS). A table row becomes a tagged paragraph: the
first cell is the tag, the others follow ("header: cell" for the middle
ones). Links keep their text; the page needs no network and no pandoc.
"""

import re
import sys


def escape(text):
    """Roff-escapes plain text: backslashes, and a leading . or ' on a line."""
    return text.replace("\\", "\\e")


def inline(text):
    """Markdown inline markup to roff font changes."""
    out = []
    # Links and images first (their text may hold code spans), then code
    # spans: nothing inside them is markup.
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    parts = re.split(r"(`+)(.*?)\1", text)
    i = 0
    while i < len(parts):
        plain = parts[i]
        plain = re.sub(r"<[^>]+>", "", plain)
        plain = escape(plain)
        plain = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", plain)
        plain = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", plain)
        plain = plain.replace("&middot;", "\\(md").replace("&amp;", "&")
        out.append(plain)
        if i + 2 < len(parts):
            code = escape(parts[i + 2]).replace("-", "\\-")
            out.append("\\fB" + code + "\\fR")
        i += 3
    return "".join(out)


def line_safe(text):
    """A line of roff must not start with a control character."""
    return "\\&" + text if text.startswith((".", "'")) else text


def cells(row):
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|"):
        row = row[:-1]
    # Split on | that is not escaped (\|) and not inside a code span.
    result, current, in_code = [], "", False
    i = 0
    while i < len(row):
        c = row[i]
        if c == "\\" and i + 1 < len(row) and row[i + 1] == "|":
            current += "|"
            i += 2
            continue
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            result.append(current.strip())
            current = ""
        else:
            current += c
        i += 1
    result.append(current.strip())
    return result


def convert(lines, name, section, description, version):
    out = [
        '.TH "%s" "%s" "" "trace2d %s" "trace2d"' % (name.upper(), section, version),
        ".SH NAME",
        "%s \\- %s" % (name.replace("-", "\\-"), escape(description)),
    ]
    paragraph = []
    state = {"list": False}

    def flush():
        # Text before the first "## " heading: the page's description.
        if paragraph and not any(line.startswith(".SH") for line in out[1:] if line != ".SH NAME"):
            out.append(".SH DESCRIPTION")
        if paragraph:
            out.append(line_safe(inline(" ".join(paragraph))))
            paragraph.clear()

    i = 0
    seen_title = False
    while i < len(lines):
        line = lines[i].rstrip("\n")
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            out.extend([".PP", ".RS 4", ".nf"])
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                out.append(line_safe(escape(lines[i].rstrip("\n"))))
                i += 1
            out.extend([".fi", ".RE"])
            i += 1
            continue
        heading = re.match(r"^(#{1,4})\s+(.*)$", line)
        if heading:
            flush()
            level, title = len(heading.group(1)), inline(heading.group(2))
            if level == 1 and not seen_title:
                seen_title = True  # the NAME section says it
            elif level <= 2:
                out.append('.SH "%s"' % re.sub(r"\\f[BIR]", "", title).upper())
            else:
                out.append('.SS "%s"' % re.sub(r"\\f[BIR]", "", title))
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            flush()
            header = cells(line)
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                row = cells(lines[i])
                out.append(".TP")
                out.append(line_safe(inline(row[0])))
                rest = []
                for h, c in list(zip(header, row))[1:-1]:
                    if c:
                        rest.append(("%s: %s" % (h, c)) if h else c)
                if len(row) > 1 and row[-1]:
                    rest.append(row[-1])
                out.append(line_safe(inline("; ".join(rest[:-1]) + (". " if len(rest) > 1 else "") + rest[-1]))
                           if rest else "")
                i += 1
            out.append(".PP")
            continue
        bullet = re.match(r"^(\s*)([-*]|\d+\.)\s+(.*)$", line)
        if bullet:
            flush()
            mark = "\\(bu" if bullet.group(2) in "-*" else bullet.group(2)
            out.append(".IP %s 4" % mark)
            paragraph.append(bullet.group(3))
            i += 1
            # Continuation lines: indented, until a blank line or a new item.
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip() and \
                    not re.match(r"^\s*([-*]|\d+\.)\s+", lines[i]):
                paragraph.append(lines[i].strip())
                i += 1
            flush()
            state["list"] = True
            continue
        if not stripped:
            flush()
            if state["list"]:
                state["list"] = False
            out.append(".PP")
            i += 1
            continue
        if state["list"] and not line.startswith(" "):
            out.append(".PP")
            state["list"] = False
        paragraph.append(stripped)
        i += 1
    flush()
    # Collapse runs of paragraph breaks.
    cleaned = []
    for line in out:
        if line == ".PP" and cleaned and cleaned[-1] in (".PP", ".TP") :
            continue
        if line == ".PP" and cleaned and cleaned[-1].startswith((".SH", ".SS")):
            continue
        cleaned.append(line)
    return "\n".join(cleaned) + "\n"


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    source, target, name, section, description, version = sys.argv[1:]
    with open(source, encoding="utf-8") as f:
        lines = f.readlines()
    text = convert(lines, name, section, description, version)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
