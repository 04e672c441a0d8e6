/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Page elements: the image (srcset of the stored widths, sizes set to the
 * width it is shown at), clickable link overlays, search highlights and the
 * watermark. Elements are kept in a small least-recently-used cache, so
 * turning back and forth reuses them and far-away pages are let go (their
 * images with them): memory stays bounded however long the book is.
 */
import type { HitRect, ReaderData } from '../reader.types.ts';
import { h, px } from './dom.ts';

const MIN_TARGET = 24;

function linkLabel(url: string): string {
  if (url.startsWith('mailto:')) return `E-mail ${url.slice(7)}`;
  if (url.startsWith('tel:')) return `Call ${url.slice(4)}`;
  return `Open ${url} (new tab)`;
}

export class Pages {
  private readonly data: ReaderData;
  private readonly cache = new Map<number, HTMLElement>();
  private hits = new Map<number, HitRect[]>();
  private ssr: HTMLImageElement | null;
  /** How many detached page elements may stay cached. */
  limit = 14;

  constructor(data: ReaderData) {
    this.data = data;
    this.ssr = document.querySelector<HTMLImageElement>('img.ssr-img');
  }

  get count(): number {
    return this.data.pages.length;
  }

  /** Width / height of page n. */
  ratio(n: number): number {
    const page = this.data.pages[n - 1];
    return page ? page.w / page.h : 0.7071;
  }

  /** The element of page n, sized width x height (CSS px). */
  get(n: number, width: number, height: number): HTMLElement {
    let el = this.cache.get(n);
    if (el) {
      this.cache.delete(n);
    } else {
      el = this.create(n, width);
    }
    this.cache.set(n, el);
    this.size(el, width, height);
    this.trim();
    return el;
  }

  private create(n: number, width: number): HTMLElement {
    const page = this.data.pages[n - 1]!;
    const el = h('div', 'page');
    el.dataset.page = String(n);
    let img: HTMLImageElement;
    if (n === 1 && this.ssr) {
      // The server-rendered cover: already loading (or loaded), so adopt it rather than start again.
      img = this.ssr;
      this.ssr = null;
      img.className = '';
    } else {
      img = h('img');
      img.alt = `Page ${n}`;
      img.decoding = 'async';
      img.draggable = false;
      const largest = page.i[page.i.length - 1];
      if (largest) {
        img.width = largest[0];
        img.height = largest[1];
      }
      img.sizes = `${Math.ceil(width)}px`;
      img.srcset = page.i.map(([w, , suffix]) => `${this.data.img}${suffix} ${w}w`).join(', ');
      const fallback = page.i[Math.min(1, page.i.length - 1)];
      if (fallback) img.src = this.data.img + fallback[2];
    }
    el.append(img);
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
    return el;
  }

  /** Sizes a page element; link overlays get at least a 24 px target (WCAG 2.5.8), centred on their area. */
  size(el: HTMLElement, width: number, height: number): void {
    el.style.width = px(width);
    el.style.height = px(height);
    const img = el.querySelector('img');
    const sizes = `${Math.ceil(width)}px`;
    if (img && img.sizes !== sizes) img.sizes = sizes;
    for (const a of el.querySelectorAll<HTMLElement>('.lnk')) {
      const [x, y, w, hgt] = a.dataset.box!.split(',').map(Number) as [number, number, number, number];
      const minW = Math.min(1, MIN_TARGET / width);
      const minH = Math.min(1, MIN_TARGET / height);
      const bw = Math.max(w, minW);
      const bh = Math.max(hgt, minH);
      const left = Math.min(Math.max(0, x - (bw - w) / 2), 1 - bw);
      const top = Math.min(Math.max(0, y - (bh - hgt) / 2), 1 - bh);
      a.style.left = `${left * 100}%`;
      a.style.top = `${top * 100}%`;
      a.style.width = `${bw * 100}%`;
      a.style.height = `${bh * 100}%`;
    }
  }

  /** Drops the least recently used pages that are not on screen. */
  private trim(): void {
    if (this.cache.size <= this.limit) return;
    for (const [n, el] of this.cache) {
      if (this.cache.size <= this.limit) break;
      if (el.isConnected) continue;
      this.cache.delete(n);
      const img = el.querySelector('img');
      // Detached images may keep decoding; clearing the source lets the browser free them.
      if (img) {
        img.removeAttribute('srcset');
        img.removeAttribute('src');
      }
    }
  }

  /** Search highlights, page → rects; replaces the previous ones. */
  setHits(hits: Map<number, HitRect[]>): void {
    this.hits = hits;
    for (const [n, el] of this.cache) this.paintHits(el, n);
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
    el.querySelector('img')!.after(layer);
  }

  /** Blank paper of the given size (for the flick-through riffle). */
  blank(width: number, height: number): HTMLElement {
    const el = h('div', 'page blank');
    el.style.width = px(width);
    el.style.height = px(height);
    return el;
  }
}
