/**
 * Auto-links: web addresses (http://, https://, www.) and e-mail addresses
 * found in a page's text, as clickable rectangles, for books with
 * auto_links_enabled.
 *
 * pdf.js splits a line into several items where the font or spacing changes,
 * and a URL may straddle two of them, so items are first joined into lines
 * (same baseline band, left to right) and matched per line; a match's rectangle
 * is the union of the character ranges it covers, assuming characters of
 * equal width within an item (close enough for a click target).
 * Not handled: an address broken across two lines.
 */
import type { NormalisedRect, PageLink, TextItem } from './conversion.types.ts';

// Stops at whitespace, quotes and angle brackets; trailing punctuation is trimmed after.
const URL_PATTERN = /\b(?:https?:\/\/|www\.)[^\s<>"'`{}|\\^]+/gi;
const EMAIL_PATTERN = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const TRAILING = /[.,;:!?'"*]+$/;

interface Piece {
  item: TextItem;
  /** Offset of the item's first character in the line string. */
  start: number;
}

interface Line {
  text: string;
  pieces: Piece[];
}

function groupLines(items: readonly TextItem[]): Line[] {
  const lines: Line[] = [];
  let current: { pieces: Piece[]; text: string; last: TextItem } | null = null;
  for (const item of items) {
    if (!item.text) continue;
    if (current) {
      const last = current.last;
      const centre = item.y + item.height / 2;
      const lastCentre = last.y + last.height / 2;
      const sameLine = Math.abs(centre - lastCentre) < Math.min(item.height, last.height) / 2 && item.x >= last.x;
      if (sameLine) {
        // A visible gap wider than about a third of a character is a space.
        const charWidth = last.width / Math.max(1, last.text.length);
        const gap = item.x - (last.x + last.width);
        if (gap > charWidth * 0.3 && !current.text.endsWith(' ') && !item.text.startsWith(' ')) current.text += ' ';
        current.pieces.push({ item, start: current.text.length });
        current.text += item.text;
        current.last = item;
        continue;
      }
      lines.push({ text: current.text, pieces: current.pieces });
    }
    current = { pieces: [{ item, start: 0 }], text: item.text, last: item };
  }
  if (current) lines.push({ text: current.text, pieces: current.pieces });
  return lines;
}

/** The box covering characters [from, to) of a line. */
function rectOf(line: Line, from: number, to: number): NormalisedRect | null {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const { item, start } of line.pieces) {
    const a = Math.max(from, start);
    const b = Math.min(to, start + item.text.length);
    if (a >= b) continue;
    const perChar = item.width / item.text.length;
    x0 = Math.min(x0, item.x + (a - start) * perChar);
    x1 = Math.max(x1, item.x + (b - start) * perChar);
    y0 = Math.min(y0, item.y);
    y1 = Math.max(y1, item.y + item.height);
  }
  if (!Number.isFinite(x0) || x1 <= x0 || y1 <= y0) return null;
  const round = (v: number) => Math.round(v * 100_000) / 100_000;
  return { x: round(x0), y: round(y0), width: round(x1 - x0), height: round(y1 - y0) };
}

/** Trims sentence punctuation and a closing bracket that has no opening one inside the URL. */
function trimUrl(raw: string): string {
  let url = raw;
  for (;;) {
    const before = url;
    url = url.replace(TRAILING, '');
    for (const [open, close] of [['(', ')'], ['[', ']']] as const) {
      if (url.endsWith(close) && url.split(open).length < url.split(close).length) url = url.slice(0, -1);
    }
    if (url === before) return url;
  }
}

function normaliseUrl(candidate: string): string | null {
  const withScheme = /^www\./i.test(candidate) ? `https://${candidate}` : candidate;
  try {
    const url = new URL(withScheme);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    // "www." alone or "http://foo" without a dot is more likely prose than an address.
    if (!url.hostname.includes('.') || url.hostname.endsWith('.')) return null;
    return url.href;
  } catch {
    return null;
  }
}

/** URLs and e-mail addresses in the text items of one page, as `source: 'text'` links. */
export function detectTextLinks(items: readonly TextItem[]): PageLink[] {
  const links: PageLink[] = [];
  for (const line of groupLines(items)) {
    const taken: [number, number][] = [];
    for (const match of line.text.matchAll(URL_PATTERN)) {
      const text = trimUrl(match[0]);
      const url = normaliseUrl(text);
      if (!url) continue;
      const from = match.index;
      const to = from + text.length;
      taken.push([from, to]);
      const rect = rectOf(line, from, to);
      if (rect) links.push({ ...rect, url, source: 'text' });
    }
    for (const match of line.text.matchAll(EMAIL_PATTERN)) {
      const from = match.index;
      const to = from + match[0].length;
      // user@host inside an already-linked URL belongs to that URL.
      if (taken.some(([a, b]) => from < b && to > a)) continue;
      const rect = rectOf(line, from, to);
      if (rect) links.push({ ...rect, url: `mailto:${match[0]}`, source: 'text' });
    }
  }
  return links;
}

/** Drops auto-links that cover an area the PDF already links (its own link wins). */
export function withoutOverlaps(detected: readonly PageLink[], existing: readonly PageLink[]): PageLink[] {
  const overlap = (a: NormalisedRect, b: NormalisedRect) => {
    const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
    const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
    return w > 0 && h > 0 ? (w * h) / (a.width * a.height) : 0;
  };
  return detected.filter((link) => !existing.some((other) => overlap(link, other) > 0.5));
}
