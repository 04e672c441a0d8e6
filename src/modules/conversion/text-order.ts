/**
 * Text as people read it, from text as a PDF paints it.
 *
 * - Control characters: C0 and C1 controls (U+0000-U+001F, U+007F-U+009F)
 *   are painted invisibly by hidden text layers and some producers; they are
 *   removed, except tab and newline.
 * - Vertical presentation forms become the characters they stand for.
 * - Shaping clusters: a producer that shapes text (cairo, used by WeasyPrint
 *   and many Linux applications) gives the whole text of a cluster, in
 *   logical order, to one glyph of it and nothing to the others. pdf.js reads
 *   a run as painted, in visual order, and reverses its right-to-left part,
 *   which turns such a cluster backwards (حَبيبي becomes يبيبَح). The texts of
 *   the page's multi-character glyphs are known (restoreClusters): where a run
 *   holds one of them reversed, it is put back.
 * - Right-to-left scripts: pdf.js puts the characters of each text run in
 *   logical order (its own bidi pass), but keeps the runs of a line in the
 *   order the producer painted them. Producers that paint a line left to right
 *   (visual order) leave the words of an Arabic or Hebrew line reversed. A
 *   line whose runs were painted strictly left to right and that holds
 *   right-to-left text is put back in logical order with the Unicode
 *   Bidirectional Algorithm (bidi-js): each run stands for one character of
 *   its class (R, L, digit, neutral), the line's direction is its majority
 *   script, and the algorithm's reordering of that visual string gives the
 *   logical order of the runs. A line painted in any other order was painted
 *   logically (LibreOffice writes mixed lines run by run) and is kept.
 */
import bidiModule, { type Bidi } from 'bidi-js';
import type { TextItem } from './conversion.types.ts';

/** bidi-js is a CommonJS module whose export is its factory (its typings describe the ESM build). */
const bidi = (bidiModule as unknown as () => Bidi)();

/** C0 and C1 controls but tab (U+0009) and newline (U+000A). */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

export function stripControls(text: string): string {
  return text.replace(CONTROLS, '');
}

/**
 * Vertical presentation forms (U+FE10-FE19, U+FE30-FE4F: ︒ for 。, ︵ for （)
 * → the characters people type. pdf.js substitutes them when it draws vertical
 * text in a font the PDF does not embed, and its text follows; a search for
 * "猫である。" must find them.
 */
const VERTICAL_FORMS = /[\uFE10-\uFE19\uFE30-\uFE4F]/g;
export function horizontalForms(text: string): string {
  return text.replace(VERTICAL_FORMS, (char) => char.normalize('NFKC'));
}

/**
 * Runs with a right-to-left cluster turned backwards by the extraction put
 * right: `clusters` are the texts of single glyphs that stand for several
 * characters, right-to-left ones among them (pdf-page-data.ts).
 */
export function restoreClusters(text: string, clusters: readonly string[]): string {
  let restored = text;
  for (const cluster of clusters) {
    const logical = cluster.trim();
    if ([...logical].length < 2 || runClass(logical) !== 'R') continue;
    // What pdf.js's bidi pass makes of a logical string it takes for visual order.
    const reversed = bidi.getReorderedString(logical, bidi.getEmbeddingLevels(logical, 'rtl'));
    if (reversed !== logical && restored.includes(reversed)) restored = restored.split(reversed).join(logical);
  }
  return restored;
}

type RunClass = 'R' | 'L' | 'EN' | 'N';

/** The strong direction of a run, by the bidi class of its characters. */
export function runClass(text: string): RunClass {
  let rtl = 0;
  let ltr = 0;
  let digits = 0;
  for (const char of text) {
    const type = bidi.getBidiCharTypeName(char);
    if (type === 'R' || type === 'AL') rtl++;
    else if (type === 'L') ltr++;
    else if (type === 'EN' || type === 'AN') digits++;
  }
  if (rtl > 0 && rtl >= ltr) return 'R';
  if (ltr > 0) return 'L';
  return digits > 0 ? 'EN' : 'N';
}

/** One character standing for a run of each class in the synthetic line given to the algorithm. */
const STAND_IN: Record<RunClass, string> = { R: '\u05d0', L: 'a', EN: '1', N: '-' };

interface Line {
  start: number;
  end: number;
}

/**
 * A run's place in its own reading frame: `along` grows in its reading
 * direction on the displayed page, `across` is the middle of its band, and
 * `thickness` the band's width. Runs turned with the page (/Rotate) or on it
 * by a right angle are lines like any other.
 */
function frame(item: TextItem): { along: number; across: number; thickness: number } {
  switch (item.angle ?? 0) {
    case 90:
      return { along: item.y, across: -(item.x + item.width / 2), thickness: item.width };
    case 180:
      return { along: -(item.x + item.width), across: -(item.y + item.height / 2), thickness: item.height };
    case 270:
      return { along: -(item.y + item.height), across: item.x + item.width / 2, thickness: item.width };
    default:
      return { along: item.x, across: item.y + item.height / 2, thickness: item.height };
  }
}

/** Consecutive items at the same right angle whose bands overlap are one line. */
function lines(items: readonly TextItem[]): Line[] {
  const found: Line[] = [];
  let start = 0;
  for (let i = 1; i <= items.length; i++) {
    const a = items[i - 1]!;
    const b = items[i];
    let sameLine = false;
    if (b !== undefined && (a.angle ?? 0) === (b.angle ?? 0) && (a.angle ?? 0) % 90 === 0) {
      const [fa, fb] = [frame(a), frame(b)];
      sameLine = Math.abs(fa.across - fb.across) < Math.min(fa.thickness, fb.thickness) / 2;
    }
    if (!sameLine) {
      found.push({ start, end: i });
      start = i;
    }
  }
  return found;
}

/** Puts the runs of visually painted right-to-left lines in logical order (in place, returns the array). */
export function logicalOrder(items: TextItem[]): TextItem[] {
  for (const { start, end } of lines(items)) {
    if (end - start < 2) continue;
    const line = items.slice(start, end);
    const classes = line.map((item) => runClass(item.text));
    const rtl = classes.filter((c) => c === 'R').length;
    if (rtl === 0) continue;
    // Left to right in the line's own frame: along its reading direction on the displayed page.
    const paintedLeftToRight = line.every((item, i) => i === 0 || frame(item).along >= frame(line[i - 1]!).along);
    if (!paintedLeftToRight) continue;
    const ltr = classes.filter((c) => c === 'L').length;
    const synthetic = classes.map((c) => STAND_IN[c]).join(' ');
    const levels = bidi.getEmbeddingLevels(synthetic, rtl >= ltr ? 'rtl' : 'ltr');
    // The reordering maps logical to visual; on this visual line it gives the logical order back.
    const order = bidi.getReorderedIndices(synthetic, levels).filter((index: number) => index % 2 === 0).map((index: number) => line[index / 2]!);
    items.splice(start, order.length, ...order);
  }
  return items;
}

/**
 * What goes between two consecutive runs in the page's plain text: nothing
 * when the second continues the first on the same line with no gap (a word
 * or a CJK phrase painted in several runs, as generated PDFs do when the font
 * changes mid-line: Noto SC comes in many subset files), else a space. The gap
 * is measured against the first run's mean character width, so the page's
 * aspect ratio does not matter; a word space is about half a character wide.
 */
export function runSeparator(a: TextItem, b: TextItem): '' | ' ' {
  if (/\s$/.test(a.text) || /^\s/.test(b.text)) return '';
  if (a.angle || b.angle || a.dir || b.dir || a.text.length === 0) return ' ';
  const sameLine = Math.abs(a.y + a.height / 2 - (b.y + b.height / 2)) < Math.min(a.height, b.height) / 2;
  if (!sameLine) return ' ';
  const charWidth = a.width / [...a.text].length;
  const gap = b.x - (a.x + a.width);
  return gap > -charWidth && gap < charWidth * 0.2 ? '' : ' ';
}

/** The runs of a page as one plain text (for search and the text view). */
export function joinRuns(items: readonly TextItem[]): string {
  let text = '';
  items.forEach((item, i) => {
    text += (i > 0 ? runSeparator(items[i - 1]!, item) : '') + item.text;
  });
  return text.replace(/\s+/g, ' ').trim();
}
