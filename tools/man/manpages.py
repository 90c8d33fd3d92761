#!/usr/bin/env python3
"""Man pages from the CLI's own --help: postbox.1 and one page per subcommand
(postbox-tree.1, postbox-plan-export.1, ...), so that `man postbox-sim` says what
`postbox sim --help` says, word for word.

usage: manpages.py POSTBOX_BINARY OUTPUT_DIR
"""
import re
import subprocess
import sys
from pathlib import Path


def help_text(binary, words):
    out = subprocess.run([binary, *words, "--help"], capture_output=True, text=True, check=True)
    return out.stdout


def subcommands(text):
    """The names listed under 'Subcommands:' (CLI11's layout: two spaces, the name, padding)."""
    names, inside = [], False
    for line in text.splitlines():
        if line.startswith("Subcommands:"):
            inside = True
            continue
        if inside:
            m = re.match(r"^  (\S+)\s", line + " ")
            if m and not line.startswith("   "):
                names.append(m.group(1))
            elif line and not line.startswith(" "):
                inside = False
    return names


def roff(text):
    """Preformatted roff: backslashes and hyphens escaped, control characters at a line start neutralised."""
    lines = []
    for line in text.rstrip("\n").splitlines():
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def summary(text, fallback):
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("Usage:"):
            return line.rstrip(".")
    return fallback


def page(version, words, text, parent_summary, children):
    name = "-".join(["postbox", *words])
    lines = [
        f'.TH {name.upper()} 1 "" "postbox {version}" "postbox manual"',
        ".SH NAME",
        f"{name} \\- {roff(parent_summary or summary(text, name))}",
        ".SH SYNOPSIS",
        f".B postbox {' '.join(words)}".rstrip(),
        "[OPTIONS]" + (" SUBCOMMAND" if children else ""),
        ".SH DESCRIPTION",
        "The text of",
        f".BR \"postbox {' '.join(words)} --help\"".replace("  ", " ") + ":",
        ".PP",
        ".nf",
        roff(text),
        ".fi",
        ".SH SEE ALSO",
    ]
    related = ["postbox"] if words else []
    related += ["-".join(["postbox", *words, c]) for c in children]
    lines.append(",\n".join(f".BR {r} (1)" for r in related) if related else "The documentation in docs/.")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: manpages.py POSTBOX_BINARY OUTPUT_DIR")
    binary, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
    written = []

    def visit(words, one_line):
        text = help_text(binary, words)
        children = subcommands(text)
        name = "-".join(["postbox", *words])
        (out / f"{name}.1").write_text(page(version, words, text, one_line, children))
        written.append(name)
        for child in children:
            visit([*words, child], None)

    visit([], "collective communication and barriers after the postal and send/receive models")
    print(f"{len(written)} man pages in {out}: {' '.join(written)}")


if __name__ == "__main__":
    main()
