"""Plays an asciicast v2 file into pyte, a third-party terminal emulator,
and prints the final screen, one line per row, trailing spaces trimmed.

tests/casts.rs compares it with `mk-tui render --step LAST --format text`:
a cast must end on exactly the frame `render` draws.

With --until SECONDS it stops after the events at or before that time
(tests/casts.rs reads a crash's moment of death this way).

Usage: python cast_screen.py FILE.cast [--until SECONDS]
"""

import json
import sys

import pyte
from wcwidth import wcwidth


def main(path, until=None):
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
        screen = pyte.Screen(header["width"], header["height"])
        stream = pyte.Stream(screen)
        for line in f:
            t, kind, data = json.loads(line)
            if until is not None and t > until:
                break
            if kind == "o":
                stream.feed(data)
    # The screen's characters, read cell by cell: pyte's own `display` trips
    # over an empty cell. An empty cell right after a wide character is its
    # second half; any other empty cell (the second half of a wide
    # character since overwritten by a narrow one, which a terminal shows
    # blank) is a blank.
    for y in range(screen.lines):
        line = screen.buffer[y]
        out, wide_before = [], False
        for x in range(screen.columns):
            data = line[x].data
            if data == "":
                if not wide_before:
                    out.append(" ")
                wide_before = False
                continue
            out.append(data)
            wide_before = wcwidth(data[0]) == 2
        print("".join(out).rstrip())


if __name__ == "__main__":
    args = sys.argv[1:]
    until = None
    if len(args) == 3 and args[1] == "--until":
        until = float(args[2])
    elif len(args) != 1:
        sys.exit("usage: cast_screen.py FILE.cast [--until SECONDS]")
    main(args[0], until)
