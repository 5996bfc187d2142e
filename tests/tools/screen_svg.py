"""Draws a frame of `mk-tui render --format ansi` as an SVG screenshot.

The ANSI bytes are played into pyte, a third-party terminal emulator (the
same one tests/casts.rs checks casts with), and every cell is drawn with
its colours, bold, italic, underline and strike-through, so the picture is
what a terminal shows. docs/images/ holds the screenshots the docs use;
tests/screenshots.rs regenerates them and fails when one is stale.

Usage: python screen_svg.py COLS ROWS [light] < frame.ansi > frame.svg
"""

import sys
from html import escape

import pyte
from wcwidth import wcwidth

CELL_W, CELL_H, FONT = 8.4, 17, 14

# xterm's 16 colours, by pyte's names.
NAMED = {
    "black": "000000", "red": "cd0000", "green": "00cd00", "brown": "cdcd00",
    "blue": "0000ee", "magenta": "cd00cd", "cyan": "00cdcd", "white": "e5e5e5",
    "brightblack": "7f7f7f", "brightred": "ff0000", "brightgreen": "00ff00",
    "brightbrown": "ffff00", "brightblue": "5c5cff", "brightmagenta": "ff00ff",
    "brightcyan": "00ffff", "brightwhite": "ffffff",
}


def colour(name, default):
    if name == "default":
        return default
    if name in NAMED:
        return "#" + NAMED[name]
    if len(name) == 6:
        return "#" + name
    return default


def bg_of(cell):
    return cell[4]


def main(cols, rows, light):
    screen = pyte.Screen(cols, rows)
    pyte.Stream(screen).feed(sys.stdin.read())
    ground, ink = ("#ffffff", "#000000") if light else ("#1c1c1c", "#d0d0d0")
    width, height = cols * CELL_W, rows * CELL_H
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height}" font-family="DejaVu Sans Mono, Noto Sans Mono CJK SC, monospace" '
        f'font-size="{FONT}" xml:space="preserve">',
        f'<rect width="100%" height="100%" fill="{ground}"/>',
    ]
    for y in range(rows):
        line = screen.buffer[y]
        cells = []  # (x, span, char, fg, bg, style)
        x = 0
        while x < cols:
            c = line[x]
            fg, bg = colour(c.fg, ink), colour(c.bg, ground)
            if c.reverse:
                fg, bg = bg, fg
            span = 2 if c.data and wcwidth(c.data) == 2 else 1
            style = []
            if c.bold:
                style.append('font-weight="bold"')
            if c.italics:
                style.append('font-style="italic"')
            deco = [d for d, on in (("underline", c.underscore), ("line-through", c.strikethrough)) if on]
            if deco:
                style.append(f'text-decoration="{" ".join(deco)}"')
            cells.append((x, span, c.data or " ", fg, bg, " ".join(style)))
            x += span
        # Backgrounds, one rectangle per run of one colour.
        i = 0
        while i < len(cells):
            j = i
            while j + 1 < len(cells) and cells[j + 1][4] == cells[i][4]:
                j += 1
            if cells[i][4] != ground:
                x0, x1 = cells[i][0], cells[j][0] + cells[j][1]
                out.append(
                    f'<rect x="{x0 * CELL_W:.1f}" y="{y * CELL_H}" width="{(x1 - x0) * CELL_W:.1f}" '
                    f'height="{CELL_H}" fill="{bg_of(cells[i])}"/>'
                )
            i = j + 1
        # Text, one element per run of narrow cells of one style (forced to
        # its cells' width), one per wide character.
        i = 0
        while i < len(cells):
            x0, span, _, fg, _, style = cells[i]
            j = i
            if span == 1:
                while j + 1 < len(cells) and cells[j + 1][1] == 1 and cells[j + 1][3] == fg and cells[j + 1][5] == style:
                    j += 1
            text = "".join(c[2] for c in cells[i : j + 1])
            if text.strip():
                w = (cells[j][0] + cells[j][1] - x0) * CELL_W
                out.append(
                    f'<text x="{x0 * CELL_W:.1f}" y="{y * CELL_H + CELL_H - 4}" fill="{fg}" '
                    f'textLength="{w:.1f}" lengthAdjust="spacingAndGlyphs" {style}>{escape(text)}</text>'
                )
            i = j + 1
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), len(sys.argv) > 3 and sys.argv[3] == "light")
