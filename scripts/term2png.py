#!/usr/bin/env python3
"""Render a terminal screen captured with colours to PNG.

    tmux capture-pane -e -p -N -t SESSION > screen.ans
    python3 scripts/term2png.py screen.ans out.png --cols 120 --rows 40

(`-N` keeps the spaces at the end of each row: without it tmux drops them even where they
carry a background colour, and a code block or a diff row looks ragged in the picture though
it is even on the screen.)

Reads the SGR escapes tmux writes (bold, dim, italic, underline, reverse, 16/256/true
colours) and draws each cell with DejaVu Sans Mono, falling back to DejaVu Sans for glyphs the
monospace face lacks. Needs Pillow and fontTools (`pip install pillow fonttools`).
"""

import argparse
import re
import unicodedata

from fontTools.ttLib import TTFont
from PIL import Image, ImageDraw, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu/"
SIZE = 16
DEFAULT_FG = (204, 204, 204)
DEFAULT_BG = (24, 24, 27)
BASE16 = [
    (0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16), (36, 114, 200), (188, 63, 188), (17, 168, 205),
    (229, 229, 229), (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67), (59, 142, 234),
    (214, 112, 214), (41, 184, 219), (255, 255, 255),
]


def palette(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None
        self.bg = None
        self.bold = self.dim = self.italic = self.underline = self.reverse = False

    def copy(self):
        s = Style()
        s.__dict__.update(self.__dict__)
        return s

    def apply(self, params):
        codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 2:
                self.dim = True
            elif c == 3:
                self.italic = True
            elif c == 4:
                self.underline = True
            elif c == 7:
                self.reverse = True
            elif c == 22:
                self.bold = self.dim = False
            elif c == 23:
                self.italic = False
            elif c == 24:
                self.underline = False
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37:
                self.fg = BASE16[c - 30]
            elif 90 <= c <= 97:
                self.fg = BASE16[c - 90 + 8]
            elif 40 <= c <= 47:
                self.bg = BASE16[c - 40]
            elif 100 <= c <= 107:
                self.bg = BASE16[c - 100 + 8]
            elif c == 39:
                self.fg = None
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    colour = palette(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    colour = tuple(codes[i + 2:i + 5])
                    i += 4
                else:
                    colour = None
                if c == 38:
                    self.fg = colour
                else:
                    self.bg = colour
            i += 1


def cells(text, cols, rows):
    """The screen as rows of (char, style, width) cells."""
    grid = []
    for line in text.split("\n")[:rows]:
        style = Style()
        row = []
        for token in re.split(r"(\x1b\[[0-9;]*m)", line):
            m = re.fullmatch(r"\x1b\[([0-9;]*)m", token)
            if m:
                style.apply(m.group(1))
                continue
            for ch in token:
                if ch == "\x1b" or ord(ch) < 32:
                    continue
                width = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
                row.append((ch, style.copy(), width))
        grid.append(row)
    while len(grid) < rows:
        grid.append([])
    return grid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--cols", type=int, default=120)
    ap.add_argument("--rows", type=int, default=40)
    args = ap.parse_args()
    text = open(args.input, encoding="utf-8", errors="replace").read()
    faces = {
        (False, False): "DejaVuSansMono.ttf",
        (True, False): "DejaVuSansMono-Bold.ttf",
        (False, True): "DejaVuSansMono-Oblique.ttf",
        (True, True): "DejaVuSansMono-BoldOblique.ttf",
    }
    fonts = {k: ImageFont.truetype(FONT_DIR + v, SIZE) for k, v in faces.items()}
    fallback = ImageFont.truetype(FONT_DIR + "DejaVuSans.ttf", SIZE - 2)
    mono_map = TTFont(FONT_DIR + "DejaVuSansMono.ttf").getBestCmap()
    cw = int(fonts[(False, False)].getlength("M"))
    ch_h = SIZE + 4
    img = Image.new("RGB", (cw * args.cols + 16, ch_h * args.rows + 16), DEFAULT_BG)
    draw = ImageDraw.Draw(img)
    for y, row in enumerate(cells(text, args.cols, args.rows)):
        x = 0
        for ch, st, width in row:
            fg = st.fg or DEFAULT_FG
            bg = st.bg or DEFAULT_BG
            if st.reverse:
                fg, bg = bg, fg
            if st.dim:
                fg = tuple((a + b) // 2 for a, b in zip(fg, bg))
            px, py = 8 + x * cw, 8 + y * ch_h
            if bg != DEFAULT_BG:
                draw.rectangle([px, py, px + cw * width - 1, py + ch_h - 1], fill=bg)
            if ch != " ":
                if 0x2500 <= ord(ch) <= 0x259F and ord(ch) in mono_map:
                    font = fonts[(False, False)]
                elif ord(ch) in mono_map:
                    font = fonts[(st.bold, st.italic)]
                else:
                    font = fallback
                draw.text((px, py + 1), ch, font=font, fill=fg)
            if st.underline:
                draw.line([px, py + ch_h - 2, px + cw * width, py + ch_h - 2], fill=fg)
            x += width
    img.save(args.output)


if __name__ == "__main__":
    main()
