/**
 * The renderer: content → a PDF with real text (embedded Noto subsets with
 * ToUnicode maps), real link annotations and an outline, so the existing
 * conversion pipeline gives the pages a text layer, search, links and an
 * outline exactly as for an uploaded PDF.
 *
 * Generator: pdfkit (MIT, pure JavaScript). Measured against Chromium's
 * page.pdf() for the same 48-product catalog (README, "Books from content"),
 * it needs nothing but npm, starts no browser and is faster on this machine;
 * the layouts are simple boxes, which is what it does well.
 *
 * Every product drawn records its area (page, key, rectangle as fractions of
 * the page, origin top-left), which the reader uses to show live prices and
 * stock over the page without re-rendering.
 */
import PDFDocument from 'pdfkit';
import { fontBytes, textRuns, type FontWeight } from './fonts.ts';
import { htmlToBlocks, htmlToText, type Block } from './html-blocks.ts';
import type { Template } from './templates.ts';

export const PAGE_WIDTH = 595.28;
export const PAGE_HEIGHT = 841.89;
const MARGIN = 40;
const INK = '#1d1d1f';
const MUTED = '#6e6e73';
const ACCENT = '#0b57d0';

export interface ProductArea {
  page: number;
  key: string;
  x: number;
  y: number;
  width: number;
  height: number;
  /** What the page shows, for the reader to tell a change: the price label drawn, and whether "Out of stock" was drawn. */
  price: string | null;
  outOfStock: boolean;
}

/** An image ready to embed (JPEG or PNG bytes), or null when it could not be fetched (a placeholder is drawn). */
export type ImageData = Buffer | null;

export interface RenderProduct {
  key: string;
  title: string;
  price: string | null;
  regularPrice: string | null;
  salePrice: string | null;
  currency: string | null;
  url: string | null;
  sku: string | null;
  stockStatus: string | null;
  available: boolean | null;
  description: string | null;
  image: string | null;
}

export interface RenderArticle {
  title: string;
  author: string | null;
  date: string | null;
  categories: string[];
  html: string;
  excerpt: string | null;
  url: string | null;
  image: string | null;
}

export interface Cover {
  title: string;
  description?: string | null;
  website?: string | null;
  subtitle?: string | null;
}

export interface RenderResult {
  pdf: Buffer;
  pageCount: number;
  areas: ProductArea[];
}

type Images = (url: string | null) => ImageData;

interface TextOptions {
  size: number;
  weight?: FontWeight;
  color?: string;
  width: number;
  align?: 'left' | 'center' | 'right';
  lineGap?: number;
  /** Cut to about this many lines with an ellipsis. */
  maxLines?: number;
  strike?: boolean;
}

/** A pdfkit document with the font chain, page tracking and the text helpers the layouts share. */
class Canvas {
  readonly doc: PDFKit.PDFDocument;
  private readonly registered = new Set<string>();
  page = 0;
  readonly areas: ProductArea[] = [];

  constructor(title: string) {
    this.doc = new PDFDocument({
      size: [PAGE_WIDTH, PAGE_HEIGHT],
      margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
      autoFirstPage: false,
      info: { Title: title, Creator: 'Flipbook', Producer: 'Flipbook (pdfkit)' },
      displayTitle: true,
      lang: 'en',
    });
    this.doc.on('pageAdded', () => { this.page += 1; });
  }

  /**
   * A fixed layout page (cover, grid, detail) places everything itself and
   * cuts text to fit, so pdfkit must never flow onto a new page from it: its
   * bottom margin is dropped. Article pages keep it and flow.
   */
  addPage(fixed = true): void {
    this.doc.addPage();
    if (fixed) this.doc.page.margins.bottom = 0;
  }

  private use(name: string, file: string, size: number): void {
    if (!this.registered.has(name)) {
      this.doc.registerFont(name, fontBytes(file));
      this.registered.add(name);
    }
    this.doc.font(name).fontSize(size);
  }

  widthOf(text: string, size: number, weight: FontWeight = 400): number {
    let width = 0;
    for (const run of textRuns(text, weight)) {
      this.use(run.face.name, run.face.file, size);
      width += this.doc.widthOfString(run.text);
    }
    return width;
  }

  heightOf(text: string, options: TextOptions): number {
    const runs = textRuns(this.fit(text, options), options.weight ?? 400);
    if (!runs.length) return 0;
    this.use(runs[0]!.face.name, runs[0]!.face.file, options.size);
    return this.doc.heightOfString(runs.map((r) => r.text).join(''), { width: options.width, lineGap: options.lineGap ?? 0 });
  }

  private fit(text: string, options: TextOptions): string {
    if (!options.maxLines) return text;
    const budget = options.width * options.maxLines * 0.92;
    if (this.widthOf(text, options.size, options.weight) <= budget) return text;
    const chars = [...text];
    let low = 0;
    let high = chars.length;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (this.widthOf(chars.slice(0, mid).join('') + '…', options.size, options.weight) <= budget) low = mid;
      else high = mid - 1;
    }
    return chars.slice(0, low).join('').trimEnd() + '…';
  }

  /** Draws text at (x, y) with the font chain; returns the height it took. */
  text(text: string, x: number, y: number, options: TextOptions): number {
    const content = this.fit(text.trim(), options);
    if (!content) return 0;
    const runs = textRuns(content, options.weight ?? 400);
    const startPage = this.page;
    this.doc.fillColor(options.color ?? INK);
    runs.forEach((run, index) => {
      this.use(run.face.name, run.face.file, options.size);
      const common = { width: options.width, align: options.align ?? 'left', lineGap: options.lineGap ?? 0, continued: index < runs.length - 1, strike: options.strike ?? false };
      if (index === 0) this.doc.text(run.text, x, y, common);
      else this.doc.text(run.text, common);
    });
    return this.page === startPage ? this.doc.y - y : this.doc.y - MARGIN;
  }

  image(data: ImageData, x: number, y: number, width: number, height: number, label = 'Image unavailable'): void {
    if (data) {
      try {
        this.doc.image(data, x, y, { fit: [width, height], align: 'center', valign: 'center' });
        return;
      } catch {
        // An image pdfkit cannot read falls through to the placeholder.
      }
    }
    this.doc.save().rect(x, y, width, height).fill('#f0f0f2').restore();
    this.text(label, x, y + height / 2 - 6, { size: 9, width, align: 'center', color: MUTED });
  }

  link(x: number, y: number, width: number, height: number, url: string | null): void {
    if (url) this.doc.link(x, y, width, height, url);
  }

  area(product: RenderProduct, x: number, y: number, width: number, height: number): void {
    this.areas.push({
      page: this.page, key: product.key, x: x / PAGE_WIDTH, y: y / PAGE_HEIGHT, width: width / PAGE_WIDTH, height: height / PAGE_HEIGHT,
      price: priceLabel(product), outOfStock: stockLabel(product) === 'Out of stock',
    });
  }

  async finish(): Promise<RenderResult> {
    const chunks: Buffer[] = [];
    this.doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = new Promise<void>((resolve, reject) => {
      this.doc.on('end', () => resolve());
      this.doc.on('error', reject);
    });
    this.doc.end();
    await done;
    return { pdf: Buffer.concat(chunks), pageCount: this.page, areas: this.areas };
  }
}

function money(value: string | null, currency: string | null): string | null {
  if (value === null || value === undefined || value === '') return null;
  const symbol = currency ? currencySymbol(currency) : '';
  return symbol ? `${symbol}${value}` : value;
}

const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£', JPY: '¥', CNY: '¥', INR: '₹', KRW: '₩' };
function currencySymbol(currency: string): string {
  return SYMBOLS[currency.toUpperCase()] ?? `${currency} `;
}

function drawCover(canvas: Canvas, cover: Cover): void {
  canvas.addPage();
  const doc = canvas.doc;
  doc.save().rect(0, 0, PAGE_WIDTH, PAGE_HEIGHT * 0.62).fill('#10243f').restore();
  const width = PAGE_WIDTH - 2 * 56;
  let y = PAGE_HEIGHT * 0.3;
  y += canvas.text(cover.title, 56, y, { size: 34, weight: 700, color: '#ffffff', width, maxLines: 3, lineGap: 4 }) + 12;
  if (cover.subtitle) canvas.text(cover.subtitle, 56, y, { size: 14, color: '#c9d6ea', width, maxLines: 2 });
  y = PAGE_HEIGHT * 0.62 + 36;
  if (cover.description) canvas.text(cover.description, 56, y, { size: 12, color: INK, width, maxLines: 10, lineGap: 3 });
  if (cover.website) {
    const label = cover.website.replace(/^https?:\/\//, '');
    const height = canvas.text(label, 56, PAGE_HEIGHT - 80, { size: 12, weight: 700, color: ACCENT, width });
    const href = /^https?:\/\//.test(cover.website) ? cover.website : `https://${cover.website}`;
    canvas.link(56, PAGE_HEIGHT - 80, Math.min(width, canvas.widthOf(label, 12, 700)), height, href);
  }
}

function drawPrice(canvas: Canvas, product: RenderProduct, x: number, y: number, width: number, size: number): number {
  const sale = money(product.salePrice, product.currency);
  const regular = money(product.regularPrice ?? product.price, product.currency);
  if (sale && regular && sale !== regular) {
    const saleWidth = canvas.widthOf(sale, size, 700);
    canvas.text(sale, x, y, { size, weight: 700, color: '#b3261e', width });
    canvas.text(regular, x + saleWidth + 8, y + size * 0.15, { size: size * 0.8, color: MUTED, width: Math.max(10, width - saleWidth - 8), strike: true });
    return size * 1.4;
  }
  const price = money(product.price ?? product.regularPrice, product.currency);
  if (!price) return 0;
  canvas.text(price, x, y, { size, weight: 700, width });
  return size * 1.4;
}

/** The price a reader pays, as drawn: the sale price when there is one, else the price. */
export function priceLabel(product: Pick<RenderProduct, 'price' | 'regularPrice' | 'salePrice' | 'currency'>): string | null {
  return money(product.salePrice, product.currency) ?? money(product.price ?? product.regularPrice, product.currency);
}

export function stockLabel(product: Pick<RenderProduct, 'available' | 'stockStatus'>): string | null {
  if (product.available === false || product.stockStatus === 'outofstock' || product.stockStatus === 'out_of_stock') return 'Out of stock';
  if (product.stockStatus === 'onbackorder' || product.stockStatus === 'backorder') return 'On backorder';
  if (product.stockStatus === 'preorder') return 'Pre-order';
  if (product.available === true || product.stockStatus === 'instock' || product.stockStatus === 'in_stock') return 'In stock';
  return null;
}

function drawGridPages(canvas: Canvas, products: RenderProduct[], template: Template, images: Images, heading: string): void {
  const perPage = template.columns * template.rows;
  const gap = 14;
  const top = MARGIN + 28;
  const cellWidth = (PAGE_WIDTH - 2 * MARGIN - gap * (template.columns - 1)) / template.columns;
  const cellHeight = (PAGE_HEIGHT - top - MARGIN - 14 - gap * (template.rows - 1)) / template.rows;
  const titleSize = template.columns >= 4 ? 8 : template.columns === 3 ? 9.5 : 12;
  const priceSize = titleSize + 1.5;
  for (let start = 0; start < products.length; start += perPage) {
    canvas.addPage();
    const pageProducts = products.slice(start, start + perPage);
    canvas.doc.outline.addItem(`${heading}: ${start + 1}–${start + pageProducts.length}`);
    canvas.text(heading, MARGIN, MARGIN, { size: 10, weight: 700, color: MUTED, width: PAGE_WIDTH - 2 * MARGIN, maxLines: 1 });
    canvas.text(`${canvas.page}`, MARGIN, PAGE_HEIGHT - MARGIN + 8, { size: 8, color: MUTED, width: PAGE_WIDTH - 2 * MARGIN, align: 'right' });
    pageProducts.forEach((product, index) => {
      const column = index % template.columns;
      const row = Math.floor(index / template.columns);
      const x = MARGIN + column * (cellWidth + gap);
      const y = top + row * (cellHeight + gap);
      const imageHeight = cellHeight * 0.58;
      canvas.image(images(product.image), x, y, cellWidth, imageHeight);
      let cursor = y + imageHeight + 6;
      cursor += canvas.text(product.title, x, cursor, { size: titleSize, weight: 700, width: cellWidth, maxLines: 2, lineGap: 1 }) + 3;
      if (product.sku && template.columns <= 3) cursor += canvas.text(`SKU ${product.sku}`, x, cursor, { size: titleSize - 2, color: MUTED, width: cellWidth, maxLines: 1 }) + 2;
      cursor += drawPrice(canvas, product, x, cursor, cellWidth, priceSize);
      const stock = stockLabel(product);
      if (stock && cursor < y + cellHeight - titleSize) canvas.text(stock, x, cursor, { size: titleSize - 1.5, color: stock === 'Out of stock' ? '#b3261e' : '#146c2e', width: cellWidth, maxLines: 1 });
      canvas.link(x, y, cellWidth, cellHeight, product.url);
      canvas.area(product, x, y, cellWidth, cellHeight);
    });
  }
}

function drawDetailPages(canvas: Canvas, products: RenderProduct[], images: Images): void {
  const width = PAGE_WIDTH - 2 * MARGIN;
  for (const product of products) {
    canvas.addPage();
    canvas.doc.outline.addItem(product.title.slice(0, 200));
    const imageHeight = 330;
    canvas.image(images(product.image), MARGIN, MARGIN, width, imageHeight);
    let y = MARGIN + imageHeight + 18;
    y += canvas.text(product.title, MARGIN, y, { size: 22, weight: 700, width, maxLines: 3, lineGap: 2 }) + 8;
    y += drawPrice(canvas, product, MARGIN, y, width, 16) + 4;
    const stock = stockLabel(product);
    if (stock) y += canvas.text(stock, MARGIN, y, { size: 11, color: stock === 'Out of stock' ? '#b3261e' : '#146c2e', width }) + 8;
    if (product.sku) y += canvas.text(`SKU ${product.sku}`, MARGIN, y, { size: 9, color: MUTED, width }) + 10;
    if (product.description) {
      const room = Math.max(1, Math.floor((PAGE_HEIGHT - MARGIN - 30 - y) / 15));
      canvas.text(htmlToText(product.description), MARGIN, y, { size: 11, width, lineGap: 3, maxLines: room });
    }
    if (product.url) {
      const label = 'View product →';
      canvas.text(label, MARGIN, PAGE_HEIGHT - MARGIN - 16, { size: 12, weight: 700, color: ACCENT, width });
      canvas.link(MARGIN, PAGE_HEIGHT - MARGIN - 16, canvas.widthOf(label, 12, 700), 16, product.url);
    }
    const areaTop = MARGIN;
    canvas.link(MARGIN, areaTop, width, imageHeight, product.url);
    canvas.area(product, MARGIN, areaTop, width, PAGE_HEIGHT - 2 * MARGIN);
  }
}

const HEADING_SIZES = [0, 20, 17, 15, 13, 12, 11];

function drawArticles(canvas: Canvas, articles: RenderArticle[], images: Images): void {
  const width = PAGE_WIDTH - 2 * MARGIN;
  const bottom = PAGE_HEIGHT - MARGIN;
  for (const article of articles) {
    canvas.addPage(false);
    canvas.doc.outline.addItem(article.title.slice(0, 200));
    let y = MARGIN;
    const ensure = (height: number) => {
      if (y + height > bottom) {
        canvas.addPage(false);
        y = MARGIN;
      }
    };
    const titleHeight = canvas.text(article.title, MARGIN, y, { size: 24, weight: 700, width, lineGap: 2, maxLines: 4 });
    canvas.link(MARGIN, y, width, titleHeight, article.url);
    y += titleHeight + 6;
    const byline = [article.author, article.date, article.categories.join(', ')].filter(Boolean).join(' · ');
    if (byline) y += canvas.text(byline, MARGIN, y, { size: 10, color: MUTED, width, maxLines: 2 }) + 12;
    if (article.image) {
      canvas.image(images(article.image), MARGIN, y, width, 240);
      y += 252;
    }
    const blocks: Block[] = htmlToBlocks(article.html || (article.excerpt ?? ''));
    for (const block of blocks) {
      if (block.kind === 'image') {
        ensure(200);
        canvas.image(images(block.src), MARGIN, y, width, 190, block.alt || 'Image unavailable');
        y += 200;
        continue;
      }
      const style: TextOptions =
        block.kind === 'heading' ? { size: HEADING_SIZES[block.level] ?? 12, weight: 700, width, lineGap: 2 }
        : block.kind === 'quote' ? { size: 11.5, color: MUTED, width: width - 24, lineGap: 3 }
        : block.kind === 'list-item' ? { size: 11, width: width - 18 - block.depth * 14, lineGap: 3 }
        : { size: 11, width, lineGap: 3 };
      const height = canvas.heightOf(block.text, style);
      // Headings keep with what follows; short paragraphs are not split across pages.
      ensure(block.kind === 'heading' ? height + 40 : Math.min(height, 120));
      const before = canvas.page;
      if (block.kind === 'list-item') {
        const indent = MARGIN + block.depth * 14;
        canvas.text(block.marker, indent, y, { size: 11, width: 16 });
        y += canvas.text(block.text, indent + 18, y, style);
      } else if (block.kind === 'quote') {
        canvas.doc.save().rect(MARGIN, y, 3, Math.min(height, bottom - y)).fill('#c7c7cc').restore();
        y += canvas.text(block.text, MARGIN + 14, y, style);
      } else {
        y += canvas.text(block.text, MARGIN, y, style);
      }
      if (canvas.page !== before) y = canvas.doc.y;
      y += block.kind === 'heading' ? 6 : 9;
    }
  }
}

/** A catalog: cover, then the products in the template's layout. */
export async function renderCatalogPdf(input: { title: string; cover: Cover; products: RenderProduct[]; template: Template; images: Images }): Promise<RenderResult> {
  const canvas = new Canvas(input.title);
  drawCover(canvas, input.cover);
  canvas.doc.outline.addItem('Cover');
  if (input.template.layout === 'detail') drawDetailPages(canvas, input.products, input.images);
  else drawGridPages(canvas, input.products, input.template, input.images, input.title);
  return canvas.finish();
}

/** Posts or pages as articles, one after another, each from a new page. */
export async function renderArticlesPdf(input: { title: string; articles: RenderArticle[]; images: Images }): Promise<RenderResult> {
  const canvas = new Canvas(input.title);
  drawArticles(canvas, input.articles, input.images);
  return canvas.finish();
}

/** Editor pages: each image fills one page of the canvas's size (the image is the page). */
export async function renderImagePagesPdf(input: { title: string; widthPt: number; heightPt: number; pages: Buffer[] }): Promise<RenderResult> {
  const doc = new PDFDocument({ size: [input.widthPt, input.heightPt], margin: 0, autoFirstPage: false, info: { Title: input.title, Creator: 'Flipbook' } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => { doc.on('end', () => resolve()); doc.on('error', reject); });
  for (const page of input.pages) {
    doc.addPage();
    doc.image(page, 0, 0, { width: input.widthPt, height: input.heightPt });
  }
  doc.end();
  await done;
  return { pdf: Buffer.concat(chunks), pageCount: input.pages.length, areas: [] };
}
