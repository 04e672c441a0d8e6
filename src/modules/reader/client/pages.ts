/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Page elements: two images (a stand-in and the sharp one), clickable link
 * overlays, search highlights, the selectable text layer and the watermark.
 *
 * Never a white page: every page shows its smallest rendition (320 px, a few
 * KB) at once, and the sharp rendition, chosen by the width the page is shown
 * at × devicePixelRatio × zoom, is swapped in only once it is decoded
 * (`img.decode()`), so a page is never shown half-drawn. `ready(n)` resolves
 * once a page has a decoded image: the views wait for it before they show a
 * page, for every animation (a `cut` turn included).
 *
 * Elements are kept in a small least-recently-used cache, so turning back and
 * forth reuses them and far-away pages are let go (their images with them):
 * memory stays bounded however long the book is.
 */
import type { HitRect, ReaderData, ReaderImage } from '../reader.types.ts';
import { h, px } from './dom.ts';
import { TextLayer } from './text-layer.ts';

const MIN_TARGET = 24;

function linkLabel(url: string): string {
  if (url.startsWith('mailto:')) return `E-mail ${url.slice(7)}`;
  if (url.startsWith('tel:')) return `Call ${url.slice(4)}`;
  return `Open ${url} (new tab)`;
}

/** The smallest rendition at least `need` px wide (5 % slack), or the largest. */
export function pickRendition(images: ReaderImage[], need: number): ReaderImage | undefined {
  return images.find(([w]) => w >= need * 0.95) ?? images[images.length - 1];
}

/** Resolves when the image has loaded and is decoded (or has failed: a broken image is not waited on forever). */
function decoded(img: HTMLImageElement): Promise<void> {
  return img.decode().catch(() => undefined);
}

interface PageState {
  el: HTMLElement;
  lo: HTMLImageElement;
  /** The sharp image on screen (shown once decoded), and the width of its rendition. */
  hi: HTMLImageElement | null;
  hiWidth: number;
  /** Resolves once the page has a decoded image to show. */
  ready: Promise<void>;
  isReady: boolean;
  /** CSS width the page is shown at. */
  width: number;
}

export class Pages {
  private readonly data: ReaderData;
  private readonly cache = new Map<number, PageState>();
  private hits = new Map<number, HitRect[]>();
  private ssr: { lo: HTMLImageElement | null; hi: HTMLImageElement } | null;
  private readonly text: TextLayer;
  /** Zoom factor of the view: sharp renditions are picked for the width × zoom. */
  private zoom = 1;
  /** Sharp images wait until the cover is shown, so the cover loads before anything else. */
  private readonly coverShown: Promise<void>;
  /** How many detached page elements may stay cached. */
  limit = 14;

  constructor(data: ReaderData) {
    this.data = data;
    this.text = new TextLayer(data);
    const hi = document.querySelector<HTMLImageElement>('img.ssr-img');
    this.ssr = hi ? { hi, lo: document.querySelector<HTMLImageElement>('img.ssr-lo') } : null;
    this.coverShown = hi ? decoded(hi) : Promise.resolve();
  }

  get count(): number {
    return this.data.pages.length;
  }

  /** Width / height of page n. */
  ratio(n: number): number {
    const page = this.data.pages[n - 1];
    return page ? page.w / page.h : 0.7071;
  }

  /** The element of page n, sized width x height (CSS px). `sharp`: load its sharp image now (pages on screen). */
  get(n: number, width: number, height: number, sharp = true): HTMLElement {
    let state = this.cache.get(n);
    if (state) this.cache.delete(n);
    else state = this.create(n);
    this.cache.set(n, state);
    this.size(state, width, height);
    if (sharp) this.sharpen(n, state);
    else void this.coverShown.then(() => state.ready).then(() => this.cache.get(n) === state && this.sharpen(n, state));
    this.trim();
    return state.el;
  }

  /** Whether page n has a decoded image (synchronous check), and a promise for it. */
  isReady(n: number): boolean {
    return this.cache.get(n)?.isReady ?? false;
  }

  ready(n: number): Promise<void> {
    return this.cache.get(n)?.ready ?? Promise.resolve();
  }

  /** Picks renditions for a new zoom factor (pages on screen get sharper ones, loaded for them only). */
  setZoom(zoom: number, onScreen: number[]): void {
    this.zoom = zoom;
    for (const n of onScreen) {
      const state = this.cache.get(n);
      if (state) this.sharpen(n, state);
    }
  }

  /** The rendition width of the sharp image page n shows (0: only the stand-in yet). */
  shownWidth(n: number): number {
    const state = this.cache.get(n);
    return state?.hi?.classList.contains('ready') ? state.hiWidth : 0;
  }

  private create(n: number): PageState {
    const page = this.data.pages[n - 1]!;
    const el = h('div', 'page');
    el.dataset.page = String(n);
    let lo: HTMLImageElement;
    let hi: HTMLImageElement | null = null;
    let hiWidth = 0;
    const smallest = page.i[0];
    if (n === 1 && this.ssr) {
      // The server-rendered cover: already loading (or loaded), so adopt it rather than start again.
      hi = this.ssr.hi;
      hi.className = 'hi';
      hi.alt = '';
      hi.setAttribute('aria-hidden', 'true');
      // The rendition the browser picked from the srcset (it names it as soon as the request starts).
      const picked = page.i.find(([, , suffix]) => hi!.currentSrc.endsWith(suffix));
      hiWidth = picked?.[0] ?? page.i[page.i.length - 1]?.[0] ?? 0;
      lo = this.ssr.lo ?? this.image(n, smallest);
      lo.className = 'lo';
      lo.alt = `Page ${n}`;
      this.ssr = null;
    } else {
      lo = this.image(n, smallest);
      lo.className = 'lo';
    }
    el.append(lo);
    if (hi) el.append(hi);
    const state: PageState = { el, lo, hi, hiWidth, ready: Promise.resolve(), isReady: false, width: 0 };
    // Server-rendered images already on screen are decoded: ready at once, so the take-over shows no gap.
    if ([lo, hi].some((img) => img && img.complete && img.naturalWidth > 0)) {
      state.isReady = true;
      el.dataset.ready = 'true';
    }
    const shown = hi ? Promise.race([decoded(lo), decoded(hi)]) : decoded(lo);
    state.ready = shown.then(() => {
      state.isReady = true;
      el.dataset.ready = 'true';
    });
    if (hi) {
      const adopted = hi;
      void decoded(adopted).then(() => {
        if (state.hi === adopted && adopted.naturalWidth > 0) {
          adopted.classList.add('ready');
          state.hiWidth = adopted.naturalWidth;
        }
      });
    }
    if (page.l) {
      const layer = h('div', 'links');
      for (const [x, y, w, hgt, target] of page.l) {
        const a = h('a', 'lnk');
        a.dataset.box = `${x},${y},${w},${hgt}`;
        if (typeof target === 'number') {
          a.href = `#page=${target}`;
          a.setAttribute('aria-label', `Go to page ${target}`);
        } else {
          a.href = target;
          if (/^https?:/i.test(target)) a.target = '_blank';
          a.rel = 'noopener noreferrer';
          a.setAttribute('aria-label', linkLabel(target));
        }
        layer.append(a);
      }
      el.append(layer);
    }
    this.paintHits(el, n);
    if (this.data.wm) {
      const mark = h('div', 'wm', { 'aria-hidden': 'true' });
      for (let i = 0; i < 5; i++) mark.appendChild(h('span')).textContent = this.data.wm;
      el.append(mark);
    }
    return state;
  }

  private image(n: number, rendition: ReaderImage | undefined): HTMLImageElement {
    const img = h('img');
    img.alt = `Page ${n}`;
    img.decoding = 'async';
    img.draggable = false;
    if (rendition) {
      img.width = rendition[0];
      img.height = rendition[1];
      img.src = this.data.img + rendition[2];
    }
    return img;
  }

  /** Loads the rendition the page needs at its size and zoom, and swaps it in once decoded. */
  private sharpen(n: number, state: PageState): void {
    const page = this.data.pages[n - 1]!;
    const need = state.width * (window.devicePixelRatio || 1) * this.zoom;
    const rendition = pickRendition(page.i, need);
    // One drawn on its first request (2048 px, zoom) can take a second: the best stored one shows meanwhile.
    if (rendition?.[3]) this.load(n, state, pickRendition(page.i.filter((r) => !r[3]), need));
    this.load(n, state, rendition);
  }

  private load(n: number, state: PageState, rendition: ReaderImage | undefined): void {
    const page = this.data.pages[n - 1]!;
    if (!rendition || rendition === page.i[0] || rendition[0] <= state.hiWidth) return;
    const wanted = (state.el.dataset.want ?? '').split(' ');
    if (wanted.includes(String(rendition[0]))) return;
    state.el.dataset.want = [...wanted.filter(Boolean), rendition[0]].join(' ');
    const next = this.image(n, rendition);
    next.className = 'hi';
    next.alt = '';
    next.setAttribute('aria-hidden', 'true');
    // The stand-in's alt names the page; the sharp copy on top is decoration for assistive technology.
    state.el.insertBefore(next, state.hi ? state.hi.nextSibling : state.lo.nextSibling);
    void decoded(next).then(() => {
      if (!next.isConnected && this.cache.get(n) !== state) return;
      if (next.naturalWidth === 0 || rendition[0] <= state.hiWidth) {
        next.remove();
        return;
      }
      next.classList.add('ready');
      const old = state.hi;
      state.hi = next;
      state.hiWidth = rendition[0];
      old?.remove();
      if (!state.isReady) {
        state.isReady = true;
        state.el.dataset.ready = 'true';
      }
    });
  }

  /** Sizes a page element; link overlays get at least a 24 px target (WCAG 2.5.8), centred on their area, never over another. */
  private size(state: PageState, width: number, height: number): void {
    const { el } = state;
    state.width = width;
    el.style.width = px(width);
    el.style.height = px(height);
    const boxes: [number, number, number, number][] = [];
    const links = [...el.querySelectorAll<HTMLElement>('.lnk')];
    const areas = links.map((a) => a.dataset.box!.split(',').map(Number) as [number, number, number, number]);
    const overlaps = (a: number[], b: number[]) => a[0]! < b[0]! + b[2]! && b[0]! < a[0]! + a[2]! && a[1]! < b[1]! + b[3]! && b[1]! < a[1]! + a[3]!;
    links.forEach((a, i) => {
      const [x, y, w, hgt] = areas[i]!;
      const minW = Math.min(1, MIN_TARGET / width);
      const minH = Math.min(1, MIN_TARGET / height);
      const bw = Math.max(w, minW);
      const bh = Math.max(hgt, minH);
      let box: [number, number, number, number] = [Math.min(Math.max(0, x - (bw - w) / 2), 1 - bw), Math.min(Math.max(0, y - (bh - hgt) / 2), 1 - bh), bw, bh];
      // Enlarged, it would cover a neighbour: keep its own area (axe's spacing exception then applies).
      if (areas.some((other, j) => j !== i && overlaps(box, other)) || boxes.some((other) => overlaps(box, other))) box = [x, y, w, hgt];
      boxes.push(box);
      a.style.left = `${box[0] * 100}%`;
      a.style.top = `${box[1] * 100}%`;
      a.style.width = `${box[2] * 100}%`;
      a.style.height = `${box[3] * 100}%`;
    });
  }

  /** Adds the page's selectable text once it is on screen. */
  showText(n: number): void {
    const state = this.cache.get(n);
    if (state) this.text.attach(state.el, n);
  }

  /** Drops the least recently used pages that are not on screen. */
  private trim(): void {
    if (this.cache.size <= this.limit) return;
    for (const [n, state] of this.cache) {
      if (this.cache.size <= this.limit) break;
      if (state.el.isConnected) continue;
      this.cache.delete(n);
      // Let go of the element whole, images untouched: clearing an image's src makes Chromium build its
      // alt-text fallback, whose inner image registers a viewport listener with the document that is never
      // removed, so the detached page (and everything in it) would be kept for ever (about 15 nodes a turn).
      state.el.remove();
    }
  }

  /** Search highlights, page → rects; replaces the previous ones. */
  setHits(hits: Map<number, HitRect[]>): void {
    this.hits = hits;
    for (const [n, state] of this.cache) this.paintHits(state.el, n);
  }

  private paintHits(el: HTMLElement, n: number): void {
    el.querySelector('.hits')?.remove();
    const rects = this.hits.get(n);
    if (!rects || rects.length === 0) return;
    const layer = h('div', 'hits', { 'aria-hidden': 'true' });
    for (const [x, y, w, hgt] of rects) {
      const mark = layer.appendChild(h('i', 'hit'));
      mark.style.left = `${x * 100}%`;
      mark.style.top = `${y * 100}%`;
      mark.style.width = `${w * 100}%`;
      mark.style.height = `${hgt * 100}%`;
    }
    const images = el.querySelectorAll('img');
    images[images.length - 1]!.after(layer);
  }

  /** Blank paper of the given size (for the flick-through riffle). */
  blank(width: number, height: number): HTMLElement {
    const el = h('div', 'page blank');
    el.style.width = px(width);
    el.style.height = px(height);
    return el;
  }
}
