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
import { Loader, Need, type Load } from './loading.ts';
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

/** Stand-ins kept loaded ahead of the pages shown, in the direction of reading, and behind them. */
const AHEAD = 12;
const BEHIND = 4;
/** A turn this long (ms) after the last one is reading, not skimming. */
const READING = 2000;

interface SharpLoad {
  img: HTMLImageElement;
  load: Load;
}

interface PageState {
  el: HTMLElement;
  lo: HTMLImageElement;
  /** The stand-in's request (null: the server-rendered one, already loaded). */
  loLoad: Load | null;
  /** The sharp image on screen (shown once decoded), and the width of its rendition. */
  hi: HTMLImageElement | null;
  hiWidth: number;
  /** Sharp renditions on their way, by width. */
  pending: Map<number, SharpLoad>;
  /** Resolves once the page has a decoded image to show. */
  ready: Promise<void>;
  markReady: () => void;
  isReady: boolean;
  /** CSS width the page is shown at (0: not sized yet, a prefetch). */
  width: number;
}

export class Pages {
  private readonly data: ReaderData;
  private readonly cache = new Map<number, PageState>();
  private hits = new Map<number, HitRect[]>();
  private ssr: { lo: HTMLImageElement | null; hi: HTMLImageElement } | null;
  private readonly text: TextLayer;
  private readonly loader = new Loader();
  /** Zoom factor of the view: sharp renditions are picked for the width × zoom. */
  private zoom = 1;
  /** The pages on screen, the next ones in the direction of reading, and the stand-in window around them. */
  private shown = new Set<number>();
  private next: number[] = [];
  private window = new Set<number>();
  private direction = 1;
  /** The reader's pace: ms between the last turns (Infinity until the second turn), and when it last turned. */
  private pace = Infinity;
  private lastTurn = 0;
  private dwellTimer = 0;
  /** How many detached page elements may stay cached beyond the stand-in window. */
  limit = 6;

  constructor(data: ReaderData) {
    this.data = data;
    this.text = new TextLayer(data);
    const hi = document.querySelector<HTMLImageElement>('img.ssr-img');
    this.ssr = hi ? { hi, lo: document.querySelector<HTMLImageElement>('img.ssr-lo') } : null;
  }

  get count(): number {
    return this.data.pages.length;
  }

  /** Width / height of page n. */
  ratio(n: number): number {
    const page = this.data.pages[n - 1];
    return page ? page.w / page.h : 0.7071;
  }

  /** The element of page n, sized width x height (CSS px); its stand-in loads, and its sharp image if it is on screen (focus). */
  get(n: number, width: number, height: number, _sharp = true): HTMLElement {
    const state = this.state(n);
    this.cache.delete(n);
    this.cache.set(n, state);
    const resized = state.width !== width;
    this.size(state, width, height);
    if (this.shown.has(n) && resized) this.sharpen(n, state, Need.ShownSharp);
    // The next view is sized once the current one is shown: its sharp images come now, as the network allows.
    else if (this.next.includes(n) && resized) this.sharpen(n, state, Need.NextSharp);
    this.trim();
    return state.el;
  }

  /**
   * The reader shows `shown` now, going in `direction` (1 forward, -1 back); `next` are the pages of the
   * view after it that way. Stand-ins are fetched for the pages around, nearest ahead first; requests for
   * pages left behind are cancelled; sharp renditions are asked for what can arrive at the reader's pace.
   */
  focus(shown: number[], direction: number, next: number[] = []): void {
    const now = performance.now();
    if (this.lastTurn) {
      const gap = now - this.lastTurn;
      // Quick to see skimming, slower to forget it; a turn after seconds on a page is reading, not skimming.
      this.pace = gap > READING ? Infinity : gap < this.pace ? gap : (this.pace + gap) / 2;
    }
    this.lastTurn = now;
    if (direction) this.direction = direction > 0 ? 1 : -1;
    this.shown = new Set(shown);
    this.next = next.filter((n) => !this.shown.has(n));
    const first = Math.min(...shown);
    const last = Math.max(...shown);
    const order: [number, Need, number][] = shown.map((n, i) => [n, Need.ShownStandIn, i]);
    for (let i = 1; i <= AHEAD; i++) order.push([this.direction > 0 ? last + i : first - i, Need.Ahead, i]);
    for (let i = 1; i <= BEHIND; i++) order.push([this.direction > 0 ? first - i : last + i, Need.Behind, i]);
    const wanted = order.filter(([n]) => n >= 1 && n <= this.count);
    this.window = new Set(wanted.map(([n]) => n));
    for (const [n, state] of this.cache) {
      if (!this.window.has(n)) this.release(state);
      else if (!this.shown.has(n) && !this.next.includes(n)) this.dropSharp(state);
    }
    this.settle();
    for (const [n, need, rank] of wanted) this.standIn(n, this.state(n), need, rank);
    this.upgrade();
    clearTimeout(this.dwellTimer);
    // Once the reader stays, the pages shown get the rendition the screen wants.
    if (Number.isFinite(this.pace)) this.dwellTimer = window.setTimeout(() => this.upgrade(), this.dwellMs() + 20);
    this.trim();
  }

  /**
   * Lets go of the sharp images of the pages neither shown nor next once they are off screen: called on each
   * turn and again once a turn's animation has ended (the view it left is then off screen). Sharp images are
   * large once decoded (6 MB at 1024 px, 24 MB at 2048), so decoded memory stays bounded by the pages shown
   * and the next ones; a page let go of keeps its stand-in, and a turn back shows it until the sharp image
   * comes back from the HTTP cache.
   */
  settle(): void {
    for (const [n, state] of this.cache) {
      if (this.shown.has(n) || this.next.includes(n) || !state.hi || state.el.isConnected) continue;
      state.hi.remove();
      state.hi = null;
      state.hiWidth = 0;
    }
  }

  /** Fetches page n's stand-in before others (a page the reader may jump to: the page field). */
  prefetch(n: number): void {
    if (n < 1 || n > this.count) return;
    const state = this.state(n);
    if (!this.cache.has(n)) this.cache.set(n, state);
    this.standIn(n, state, Need.Ahead, 0);
  }

  private dwellMs(): number {
    return Math.max(250, this.pace * 1.5);
  }

  /** ms a page may take to arrive and still keep up with the reader: its pace while it skims, no limit once it stays. */
  private budget(): number {
    if (!Number.isFinite(this.pace) || performance.now() - this.lastTurn >= this.dwellMs()) return Infinity;
    return this.pace;
  }

  /** Asks for the sharp renditions the pages shown (and, when the network allows, the next ones) can have now. */
  private upgrade(): void {
    for (const n of this.shown) {
      const state = this.cache.get(n);
      if (state?.width) this.sharpen(n, state, Need.ShownSharp);
    }
    for (const n of this.next) {
      const state = this.cache.get(n);
      if (state?.width) this.sharpen(n, state, Need.NextSharp);
    }
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
      if (state) this.sharpen(n, state, Need.ShownSharp);
    }
  }

  /** The rendition width of the sharp image page n shows (0: only the stand-in yet). */
  shownWidth(n: number): number {
    const state = this.cache.get(n);
    return state?.hi?.classList.contains('ready') ? state.hiWidth : 0;
  }

  private state(n: number): PageState {
    let state = this.cache.get(n);
    if (!state) {
      state = this.create(n);
      this.cache.set(n, state);
    }
    return state;
  }

  private create(n: number): PageState {
    const page = this.data.pages[n - 1]!;
    const el = h('div', 'page');
    el.dataset.page = String(n);
    let lo: HTMLImageElement;
    let hi: HTMLImageElement | null = null;
    let hiWidth = 0;
    let loaded = false;
    if (n === 1 && this.ssr) {
      // The server-rendered cover: already loading (or loaded), so adopt it rather than start again.
      hi = this.ssr.hi;
      hi.className = 'hi';
      hi.alt = '';
      hi.setAttribute('aria-hidden', 'true');
      // The rendition the browser picked from the srcset (it names it as soon as the request starts).
      const picked = page.i.find(([, , suffix]) => hi!.currentSrc.endsWith(suffix));
      hiWidth = picked?.[0] ?? page.i[page.i.length - 1]?.[0] ?? 0;
      lo = this.ssr.lo ?? this.image(n, page.i[0]);
      loaded = Boolean(this.ssr.lo);
      lo.className = 'lo';
      lo.alt = `Page ${n}`;
      this.ssr = null;
    } else {
      lo = this.image(n, page.i[0]);
      lo.className = 'lo';
    }
    el.append(lo);
    if (hi) el.append(hi);
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const state: PageState = { el, lo, loLoad: null, hi, hiWidth, pending: new Map(), ready, markReady, isReady: false, width: 0 };
    const setReady = (): void => {
      if (state.isReady) return;
      state.isReady = true;
      el.dataset.ready = 'true';
      state.markReady();
    };
    state.markReady = () => {
      state.isReady = true;
      el.dataset.ready = 'true';
      markReady();
    };
    // Server-rendered images already on screen are decoded: ready at once, so the take-over shows no gap.
    if ([lo, hi].some((img) => img && img.complete && img.naturalWidth > 0)) setReady();
    if (loaded) void decoded(lo).then(setReady);
    if (hi) {
      const adopted = hi;
      void decoded(adopted).then(() => {
        if (state.hi === adopted && adopted.naturalWidth > 0) {
          adopted.classList.add('ready');
          state.hiWidth = adopted.naturalWidth;
          setReady();
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
    if (!loaded) this.standIn(n, state, this.shown.has(n) ? Need.ShownStandIn : Need.Ahead, 0);
    return state;
  }

  /** Sizes an image for a rendition; its source is set by the loader. */
  private image(n: number, rendition: ReaderImage | undefined): HTMLImageElement {
    const img = h('img');
    img.alt = `Page ${n}`;
    img.decoding = 'async';
    img.draggable = false;
    if (rendition) {
      img.width = rendition[0];
      img.height = rendition[1];
    }
    return img;
  }

  /** Makes sure page n's stand-in is loaded or on its way, with this need. */
  private standIn(n: number, state: PageState, need: Need, rank: number): void {
    const smallest = this.data.pages[n - 1]?.i[0];
    if (!smallest || state.isReady && !state.loLoad) return;
    const current = state.loLoad;
    if (current && current.state !== 'cancelled') {
      if (current.state !== 'done') this.loader.reorder(current, need, rank);
      return;
    }
    const load = this.loader.load(state.lo, this.data.img + smallest[2], need, rank, smallest[0] * smallest[1], Boolean(smallest[3]));
    state.loLoad = load;
    // Loaded (or failed: a broken image is not waited on forever), not cancelled: the page can be shown.
    void load.loaded.then(async () => {
      if (load.state !== 'done') return;
      await decoded(state.lo);
      state.markReady();
    });
  }

  /** Cancels what is still on its way for a page the reader has left behind. */
  private release(state: PageState): void {
    if (state.loLoad && state.loLoad.state !== 'done') this.loader.cancel(state.loLoad);
    this.dropSharp(state);
  }

  private dropSharp(state: PageState): void {
    for (const { img, load } of state.pending.values()) {
      this.loader.cancel(load);
      img.remove();
    }
    state.pending.clear();
    delete state.el.dataset.want;
  }

  /**
   * Loads the rendition the page needs at its size, density and zoom, and swaps it in once decoded. While
   * the reader skims, only what can arrive before the next turn (the network model) is asked for; the rest
   * waits until the reader stays. Save-Data asks for the width at 1 px per CSS px.
   */
  private sharpen(n: number, state: PageState, need: Need): void {
    const page = this.data.pages[n - 1]!;
    const density = this.loader.saveData ? 1 : window.devicePixelRatio || 1;
    const wanted = state.width * density * this.zoom;
    const ideal = pickRendition(page.i, wanted);
    if (!ideal) return;
    const budget = this.budget();
    // Pages shown together share the time; the next view's prefetch gets what is left after them, and never
    // makes the server draw a rendition for a page the reader may not stay on.
    const share = (this.shown.size || 1) * (need === Need.NextSharp ? 2 : 1);
    const fits = (r: ReaderImage) => (!r[3] || (budget === Infinity && need !== Need.NextSharp)) && this.loader.estimate(r[0], r[1]) * share <= budget * 0.8;
    const candidates = page.i.filter((r) => r !== page.i[0] && r[0] <= ideal[0]).reverse();
    const chosen = candidates.find(fits);
    if (!chosen) return;
    // One drawn on its first request (2048 px, zoom) can take a second: the best stored one shows meanwhile.
    if (chosen[3]) this.load(n, state, pickRendition(page.i.filter((r) => !r[3]), wanted), need);
    this.load(n, state, chosen, need);
  }

  private load(n: number, state: PageState, rendition: ReaderImage | undefined, need: Need): void {
    const page = this.data.pages[n - 1]!;
    if (!rendition || rendition === page.i[0] || rendition[0] <= state.hiWidth) return;
    const width = rendition[0];
    const pending = state.pending.get(width);
    if (pending) {
      this.loader.reorder(pending.load, need);
      return;
    }
    const next = this.image(n, rendition);
    next.className = 'hi';
    next.alt = '';
    next.setAttribute('aria-hidden', 'true');
    // The stand-in's alt names the page; the sharp copy on top is decoration for assistive technology.
    state.el.insertBefore(next, state.hi ? state.hi.nextSibling : state.lo.nextSibling);
    const load = this.loader.load(next, this.data.img + rendition[2], need, 0, rendition[3] ? 0 : rendition[0] * rendition[1], Boolean(rendition[3]));
    state.pending.set(width, { img: next, load });
    state.el.dataset.want = [...state.pending.keys()].join(' ');
    void load.loaded.then(async () => {
      if (load.state !== 'done') return;
      await decoded(next);
      if (state.pending.get(width)?.img !== next) return;
      state.pending.delete(width);
      if (next.naturalWidth === 0 || width <= state.hiWidth) {
        next.remove();
        return;
      }
      next.classList.add('ready');
      const old = state.hi;
      state.hi = next;
      state.hiWidth = width;
      old?.remove();
      // Smaller ones still on their way are no longer needed.
      for (const [w, other] of state.pending) {
        if (w < width) {
          this.loader.cancel(other.load);
          other.img.remove();
          state.pending.delete(w);
        }
      }
      state.el.dataset.want = [...state.pending.keys(), width].join(' ');
      state.markReady();
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

  /** Drops the least recently used pages that are neither on screen nor in the stand-in window. */
  private trim(): void {
    const keep = this.window.size + this.limit;
    if (this.cache.size <= keep) return;
    for (const [n, state] of this.cache) {
      if (this.cache.size <= keep) break;
      if (state.el.isConnected || this.window.has(n)) continue;
      this.cache.delete(n);
      this.release(state);
      // Whoever still waits for this page is told (it checks whether the page still matters).
      state.markReady();
      // Let go of the element whole: an image whose load was cancelled points at an empty GIF, never at
      // nothing (clearing an image's src makes Chromium build its alt-text fallback, whose inner image
      // registers a viewport listener with the document that is never removed, keeping the page for ever).
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
