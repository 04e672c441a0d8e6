/**
 * What the server hands the reader's browser code: one JSON document embedded
 * in the page (ReaderData) and the answers of the search and text endpoints.
 * Shared by the server (reader.service.ts) and the client (client/), so it
 * holds types only.
 */

/** A clickable area: x, y, width, height as 0..1 fractions of the page (origin top-left), then a URL or a 1-based page. */
export type ReaderLink = [x: number, y: number, width: number, height: number, target: string | number];

/**
 * One rendition of a page image: pixel width, pixel height, the URL after
 * ReaderData.img, and, when it is drawn on its first request (slower the first
 * time), 1 for a listed width (2048 px) or 2 for a zoom rendition.
 */
export type ReaderImage = [width: number, height: number, suffix: string, onDemand?: 1 | 2];

export interface ReaderPage {
  /** Page size in PDF points. */
  w: number;
  h: number;
  /** Smallest first. */
  i: ReaderImage[];
  l?: ReaderLink[];
}

export interface ReaderData {
  /** The book's random id. */
  id: string;
  title: string;
  /** Path prefix of the book's reader endpoints ("/read/<id>"). */
  base: string;
  /** Absolute public address of the reader (what share links point to). */
  url: string;
  /** Common prefix of every page image URL. */
  img: string;
  pages: ReaderPage[];
  /** animation_type, and mobile_animation_type (or the same) for small screens. */
  anim: string;
  manim: string;
  /** open_fullscreen_by_default (only when fullscreen is enabled). */
  fsd: boolean;
  /** sound_enabled. */
  snd: boolean;
  /** Watermark text drawn over every page, or null. */
  wm: string | null;
  /** The text of pages 1..textUntil is in the HTML; later pages come from the text endpoint. */
  textUntil: number;
  /** The book's lead form, when it has one enabled. */
  lead?: ReaderLeadForm;
  /** Reader defaults of the book (issue 16), present only when not the default: right to left, a fixed layout, slideshow seconds. */
  dir?: 'rtl';
  layout?: 'single' | 'double';
  auto?: number;
  /** Rendered from a catalog: the reader overlays live prices and stock (client/live-prices.ts). */
  live?: boolean;
  /** The application's settings preview: the reader sends no events (client/tracking.ts). */
  preview?: true;
  /** The book's current version (docs/book-versions.md): the reader reopens when it changes (client/version.ts). */
  ver?: number;
}

/** A lead form as the reader shows it (lead-forms.service.ts). */
export interface ReaderLeadForm {
  title: string;
  text: string | null;
  /** Field name and whether it is required, in order. */
  fields: [name: 'name' | 'email' | 'phone' | 'company' | 'message', required: boolean][];
  /** Opens once the reader reaches this page. */
  after: number;
}

export type HitRect = [x: number, y: number, width: number, height: number];

export interface SearchHit {
  page: number;
  /** A snippet around the first match on the page: before, match, after. */
  before: string;
  match: string;
  after: string;
  /** Where the matches are on the page (0..1 fractions), for highlighting. */
  rects: HitRect[];
}

export interface SearchResponse {
  query: string;
  /** Pages that match. */
  total: number;
  /** Every matching page, in order (for next/previous hit). */
  pages: number[];
  /** Index in `pages` of the first of `hits` (hits holds at most SEARCH_HIT_LIMIT, from here). */
  offset: number;
  hits: SearchHit[];
}

export interface TextResponse {
  pages: { page: number; text: string }[];
}

/** A run of text on a page: x, y, width, height (0..1 fractions of the page, origin top-left), then the text. */
export type TextRun = [x: number, y: number, width: number, height: number, text: string];

export interface TextLayerResponse {
  page: number;
  items: TextRun[];
}
