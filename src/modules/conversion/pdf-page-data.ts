/**
 * The non-pixel part of a PDF page and document, read with pdf.js: text runs,
 * link annotations, outline and title, all with positions normalised to the
 * displayed page (0..1, origin top-left, after /Rotate) and destinations
 * resolved to 1-based page numbers.
 */
import { OPS, type PDFDocumentProxy, type PDFPageProxy, type PageViewport } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextContent, TextItem as PdfjsTextItem, TextStyle } from 'pdfjs-dist/types/src/display/api.js';
import type { NormalisedRect, OutlineEntry, PageLink, TextItem } from './conversion.types.ts';
import { horizontalForms, logicalOrder, restoreClusters, runClass, stripControls } from './text-order.ts';

type Matrix = [number, number, number, number, number, number];
type Point = [number, number];

/** Fractions rounded to 1/100,000 of the page: finer than any screen, and JSON stays small. */
const round = (value: number) => Math.round(value * 100_000) / 100_000;
const clamp01 = (value: number) => Math.min(1, Math.max(0, value));

function apply(m: Matrix | number[], [x, y]: Point): Point {
  return [(m[0] ?? 1) * x + (m[2] ?? 0) * y + (m[4] ?? 0), (m[1] ?? 0) * x + (m[3] ?? 1) * y + (m[5] ?? 0)];
}

/** Axis-aligned box around viewport-space points, as fractions of the viewport; null if empty or not finite. */
function normaliseBox(points: Point[], viewport: { width: number; height: number }): NormalisedRect | null {
  const xs = points.map((p) => p[0] / viewport.width);
  const ys = points.map((p) => p[1] / viewport.height);
  if (![...xs, ...ys].every(Number.isFinite)) return null;
  const x0 = clamp01(Math.min(...xs));
  const x1 = clamp01(Math.max(...xs));
  const y0 = clamp01(Math.min(...ys));
  const y1 = clamp01(Math.max(...ys));
  if (x1 <= x0 || y1 <= y0) return null;
  return { x: round(x0), y: round(y0), width: round(x1 - x0), height: round(y1 - y0) };
}

/** Ascent and descent in em, as pdf.js's own text layer guesses them when the font does not say. */
function fontMetrics(style: TextStyle | undefined): { ascent: number; descent: number } {
  let ascent = style?.ascent && style.ascent > 0 && style.ascent < 2 ? style.ascent : 0;
  let descent = style?.descent && style.descent < 0 && style.descent > -1 ? style.descent : 0;
  if (!ascent) ascent = descent ? 1 + descent : 0.8;
  if (!descent) descent = ascent - 1;
  return { ascent, descent };
}

/**
 * Clockwise angle in degrees (0-359) of a direction given in user space, once
 * drawn on the displayed page (viewport space has y pointing down). Within a
 * degree of a right angle it snaps to it.
 */
function displayedAngle(viewport: Pick<PageViewport, 'transform'>, [dx, dy]: Point): number {
  const m = viewport.transform;
  const x = (m[0] ?? 1) * dx + (m[2] ?? 0) * dy;
  const y = (m[1] ?? 0) * dx + (m[3] ?? 1) * dy;
  const degrees = ((Math.atan2(y, x) * 180) / Math.PI + 360) % 360;
  const snapped = Math.round(degrees / 90) * 90;
  return (Math.abs(degrees - snapped) < 1 ? snapped : Math.round(degrees)) % 360;
}

/**
 * pdf.js text items → boxes. An item's transform maps a 1-em glyph box at the
 * origin into user space, and its width (height for vertical writing) is the
 * advance in user space; the box corners go through the viewport transform,
 * which also applies /Rotate. Each item also gets its reading direction on the
 * displayed page (`angle`, `dir`), so a highlight can be placed inside it, and
 * the runs of a line come out in reading order (text-order.ts).
 */
export function normaliseTextContent(content: TextContent, viewport: Pick<PageViewport, 'transform' | 'width' | 'height'>, clusters: readonly string[] = []): TextItem[] {
  const items: TextItem[] = [];
  for (const raw of content.items) {
    if (!('str' in raw)) continue;
    const item = raw as PdfjsTextItem;
    const text = restoreClusters(horizontalForms(stripControls(item.str)), clusters);
    if (!text || !text.trim()) continue;
    const t = item.transform as Matrix;
    const style = content.styles[item.fontName];
    const { ascent, descent } = fontMetrics(style);
    // Vertical writing: pdf.js says so in the font's style and in the run's direction
    // ("ttb"), and measures the run's advance in its height, never its width.
    const vertical = Boolean(style?.vertical) || item.dir === 'ttb';
    const em = vertical ? Math.hypot(t[2], t[3]) || Math.hypot(t[0], t[1]) : Math.hypot(t[0], t[1]) || Math.hypot(t[2], t[3]);
    // A run painted with no advance (zero-width glyph metrics) still covers its characters: one em each.
    const advance = (vertical ? item.height : item.width) / (em || 1) || [...text].length;
    let corners: Point[];
    if (vertical) {
      // Glyphs centred on the column, advancing downwards.
      corners = [[-0.5, 0], [0.5, 0], [-0.5, -advance], [0.5, -advance]];
    } else {
      corners = [[0, descent], [advance, descent], [0, ascent], [advance, ascent]];
    }
    const box = normaliseBox(
      corners.map((c) => apply(viewport.transform, apply(t, c))),
      viewport,
    );
    if (!box) continue;
    const entry: TextItem = { text, ...box };
    if (item.dir === 'rtl') entry.dir = 'rtl';
    // The advance direction: along the baseline, or down the column for vertical writing.
    const angle = displayedAngle(viewport, vertical ? [-t[2], -t[3]] : [t[0], t[1]]);
    if (angle !== 0) entry.angle = angle;
    items.push(entry);
  }
  return logicalOrder(items);
}

/** Whether pdf.js found right-to-left text in the page (then its glyph clusters are worth reading). */
export function hasRightToLeft(content: TextContent): boolean {
  return content.items.some((item) => 'dir' in item && item.dir === 'rtl');
}

/**
 * The texts of single glyphs that stand for several characters, right-to-left
 * ones among them: a shaping cluster's text as cairo writes it into ToUnicode
 * (text-order.ts, restoreClusters). Read from the page's operator list, where
 * each shown glyph carries its text; this parses the page once more, so it is
 * only asked for pages with right-to-left text.
 */
export async function rightToLeftClusters(page: PDFPageProxy): Promise<string[]> {
  const clusters = new Set<string>();
  const list = await page.getOperatorList();
  list.fnArray.forEach((fn, i) => {
    if (fn !== OPS.showText) return;
    const glyphs = (list.argsArray[i] as unknown[][] | undefined)?.[0] ?? [];
    for (const glyph of glyphs) {
      const unicode = glyph && typeof glyph === 'object' ? (glyph as { unicode?: unknown }).unicode : null;
      if (typeof unicode === 'string' && [...unicode.trim()].length > 1 && runClass(unicode) === 'R') clusters.add(unicode);
    }
  });
  return [...clusters];
}

/**
 * Resolves a pdf.js destination (a name, or an explicit [pageRef, /XYZ, ...]
 * array) to a 1-based page number. Named destinations repeat a lot (GeoTopo has
 * 509 links), so lookups are cached per document.
 */
export class DestinationResolver {
  readonly #doc: PDFDocumentProxy;
  readonly #named = new Map<string, Promise<number | null>>();

  constructor(doc: PDFDocumentProxy) {
    this.#doc = doc;
  }

  async resolve(dest: unknown): Promise<number | null> {
    if (typeof dest === 'string') {
      let cached = this.#named.get(dest);
      if (!cached) {
        cached = this.#doc.getDestination(dest).then((explicit) => this.#explicit(explicit), () => null);
        this.#named.set(dest, cached);
      }
      return cached;
    }
    return this.#explicit(dest);
  }

  async #explicit(dest: unknown): Promise<number | null> {
    if (!Array.isArray(dest) || dest.length === 0) return null;
    const target: unknown = dest[0];
    let index: number | null = null;
    if (target && typeof target === 'object' && 'num' in target && 'gen' in target) {
      index = await this.#doc.getPageIndex(target as { num: number; gen: number }).catch(() => null);
    } else if (Number.isInteger(target)) {
      // Not allowed for local destinations, but some producers write a 0-based page index.
      index = target as number;
    }
    if (index === null || index < 0 || index >= this.#doc.numPages) return null;
    return index + 1;
  }
}

/**
 * A web or mail address from a URI action. pdf.js fills `url` only for
 * absolute http(s), ftp, mailto and tel addresses (and "www." ones), which
 * keeps javascript: and file: out; producers also write bare host names
 * ("example.com/docs"), which pdf.js leaves in `unsafeUrl`: those become https.
 */
export function externalUrl(url: string | null | undefined, unsafeUrl: unknown): string | undefined {
  if (url) return url;
  if (typeof unsafeUrl !== 'string') return undefined;
  const candidate = stripControls(unsafeUrl).trim();
  if (!/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}(?::\d+)?(?:[/?#]\S*)?$/i.test(candidate)) return undefined;
  try {
    return new URL(`https://${candidate}`).href;
  } catch {
    return undefined;
  }
}

interface PdfjsLinkAnnotation {
  subtype?: string;
  rect?: number[];
  url?: string;
  unsafeUrl?: unknown;
  dest?: unknown;
  action?: string;
}

/** Named actions of viewer buttons, relative to the page they are on. */
function namedActionPage(action: string | undefined, pageNumber: number, pageCount: number): number | null {
  switch (action) {
    case 'FirstPage':
      return 1;
    case 'LastPage':
      return pageCount;
    case 'NextPage':
      return pageNumber < pageCount ? pageNumber + 1 : null;
    case 'PrevPage':
      return pageNumber > 1 ? pageNumber - 1 : null;
    default:
      return null;
  }
}

/**
 * Link annotations → links. pdf.js only fills `url` for absolute http(s),
 * ftp, mailto and tel addresses, which keeps javascript: and file: out.
 */
export async function extractLinks(page: PDFPageProxy, viewport: PageViewport, resolver: DestinationResolver, pageCount: number, annotations?: Promise<unknown[]>): Promise<PageLink[]> {
  const links: PageLink[] = [];
  for (const annotation of (await (annotations ?? page.getAnnotations({ intent: 'display' }))) as PdfjsLinkAnnotation[]) {
    if (annotation.subtype !== 'Link' || !Array.isArray(annotation.rect) || annotation.rect.length !== 4) continue;
    const [x1, y1, x2, y2] = viewport.convertToViewportRectangle(annotation.rect) as number[];
    const box = normaliseBox(
      [
        [x1 ?? NaN, y1 ?? NaN],
        [x2 ?? NaN, y2 ?? NaN],
      ],
      viewport,
    );
    if (!box) continue;
    const url = externalUrl(annotation.url, annotation.unsafeUrl);
    if (url) {
      links.push({ ...box, url, source: 'annotation' });
      continue;
    }
    const target = annotation.dest !== undefined && annotation.dest !== null
      ? await resolver.resolve(annotation.dest)
      : namedActionPage(annotation.action, page.pageNumber, pageCount);
    if (target !== null) links.push({ ...box, page: target, source: 'annotation' });
  }
  return links;
}

interface PdfjsOutlineNode {
  title: string;
  dest: unknown;
  url: string | null;
  unsafeUrl?: unknown;
  items: PdfjsOutlineNode[];
}

/** Outline with destinations resolved; bounded so a pathological outline cannot stall a job. */
export async function extractOutline(doc: PDFDocumentProxy, resolver: DestinationResolver, maxEntries = 10_000): Promise<OutlineEntry[]> {
  const nodes = ((await doc.getOutline().catch(() => null)) ?? []) as PdfjsOutlineNode[];
  let budget = maxEntries;
  const convert = async (list: PdfjsOutlineNode[], depth: number): Promise<OutlineEntry[]> => {
    const out: OutlineEntry[] = [];
    for (const node of list) {
      if (budget-- <= 0) break;
      const entry: OutlineEntry = {
        title: stripControls(node.title ?? '').replace(/\s+/g, ' ').trim(),
        page: node.dest ? await resolver.resolve(node.dest) : null,
        children: depth < 32 && node.items?.length ? await convert(node.items, depth + 1) : [],
      };
      const url = externalUrl(node.url, node.unsafeUrl);
      if (url && entry.page === null) entry.url = url;
      out.push(entry);
    }
    return out;
  };
  return convert(nodes, 0);
}

/** The document title from the Info dictionary, else from XMP dc:title; null when neither says anything. */
export async function extractTitle(doc: PDFDocumentProxy): Promise<string | null> {
  try {
    const { info, metadata } = await doc.getMetadata();
    const fromInfo = (info as { Title?: unknown } | null)?.Title;
    const candidates = [typeof fromInfo === 'string' ? fromInfo : null, metadata?.get('dc:title') ?? null];
    for (const candidate of candidates) {
      const title = candidate ? stripControls(candidate).replace(/\s+/g, ' ').trim() : '';
      if (title) return title;
    }
  } catch {
    // Damaged metadata is not worth failing a document for.
  }
  return null;
}
