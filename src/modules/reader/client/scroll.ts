/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The scroll view (animation_type scroll_view): every page in one column,
 * scrolled like a document. Only the pages within a screen of the viewport
 * are in the DOM; the rest are empty space of the right height, so a
 * thousand-page book costs no more than a short one.
 */
import { h, px } from './dom.ts';
import type { Pages } from './pages.ts';

const GAP = 12;

export class ScrollView {
  readonly kind = 'scroll';
  private readonly pages: Pages;
  private readonly scroller: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly onPage: (page: number) => void;
  private tops: number[] = [];
  private heights: number[] = [];
  private width = 0;
  private viewport = 0;
  private readonly shown = new Map<number, HTMLElement>();
  /** The pages rendered, first and last. */
  private range: [number, number] = [0, 0];
  private current = 1;
  private frame = 0;
  /** The page a programmatic scroll is heading for: until it arrives, scrolling does not change the current page. */
  private heading: number | null = null;
  private headingTimer = 0;

  constructor(stage: HTMLElement, pages: Pages, onPage: (page: number) => void) {
    this.pages = pages;
    this.onPage = onPage;
    this.scroller = h('div', 'scroller', { tabindex: '0', role: 'region', 'aria-label': 'Pages, scrolling' });
    this.spacer = h('div', 'spacer-y');
    this.scroller.append(this.spacer);
    this.scroller.addEventListener('scroll', () => {
      cancelAnimationFrame(this.frame);
      this.frame = requestAnimationFrame(() => this.update());
    }, { passive: true });
    const userScroll = () => (this.heading = null);
    this.scroller.addEventListener('wheel', userScroll, { passive: true });
    this.scroller.addEventListener('touchstart', userScroll, { passive: true });
    stage.append(this.scroller);
  }

  destroy(): void {
    cancelAnimationFrame(this.frame);
    this.scroller.remove();
  }

  firstOf(page: number): number {
    return page;
  }

  visible(): number[] {
    return [this.current];
  }

  neighbour(page: number, delta: number): number | null {
    const next = page + delta;
    return next >= 1 && next <= this.pages.count ? next : null;
  }

  layout(width: number, height: number): void {
    const keep = this.current;
    this.width = Math.min(width - 2 * GAP - 8, 1100);
    this.viewport = height;
    let top = GAP;
    this.tops = [];
    this.heights = [];
    for (let n = 1; n <= this.pages.count; n++) {
      const pageHeight = this.width / this.pages.ratio(n);
      this.tops.push(top);
      this.heights.push(pageHeight);
      top += pageHeight + GAP;
    }
    this.spacer.style.height = px(top);
    for (const el of this.shown.values()) el.remove();
    this.shown.clear();
    this.scroller.scrollTop = (this.tops[keep - 1] ?? 0) - GAP;
    this.render();
  }

  show(page: number, animate: boolean): boolean {
    const changed = page !== this.current;
    this.current = page;
    this.heading = page;
    clearTimeout(this.headingTimer);
    this.headingTimer = window.setTimeout(() => (this.heading = null), animate ? 1500 : 100);
    this.scroller.scrollTo({ top: (this.tops[page - 1] ?? 0) - GAP, behavior: animate ? 'smooth' : 'instant' });
    this.render();
    return changed;
  }

  /** The page under the upper third of the viewport. */
  private pageAt(y: number): number {
    let lo = 0;
    let hi = this.tops.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.tops[mid]! <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  private update(): void {
    this.render();
    const { scrollTop, scrollHeight, clientHeight } = this.scroller;
    const atEnd = scrollTop + clientHeight >= scrollHeight - 2;
    if (this.heading !== null) {
      const arrived = Math.abs(scrollTop - ((this.tops[this.heading - 1] ?? 0) - GAP)) < 2 || atEnd || scrollTop <= 0;
      if (arrived) this.heading = null;
      return;
    }
    const page = atEnd ? this.pages.count : this.pageAt(scrollTop + this.viewport / 3);
    if (page !== this.current) {
      this.current = page;
      this.onPage(page);
    }
  }

  private render(): void {
    const top = this.scroller.scrollTop - this.viewport;
    const bottom = this.scroller.scrollTop + 2 * this.viewport;
    const first = this.pageAt(Math.max(0, top));
    const last = this.pageAt(bottom);
    if (first !== this.range[0] || last !== this.range[1]) {
      // The pages on screen and the next screenful get their images first (Pages.focus).
      const onScreen: number[] = [];
      for (let n = this.pageAt(this.scroller.scrollTop); n <= this.pageAt(this.scroller.scrollTop + this.viewport); n++) onScreen.push(n);
      const range: number[] = [];
      for (let n = first; n <= last; n++) range.push(n);
      const direction = first < this.range[0] ? -1 : 1;
      this.range = [first, last];
      this.pages.focus(onScreen, direction, range.filter((n) => !onScreen.includes(n)));
    }
    for (const [n, el] of this.shown) {
      if (n < first || n > last) {
        el.remove();
        this.shown.delete(n);
      }
    }
    for (let n = first; n <= last; n++) {
      if (this.shown.has(n)) continue;
      const el = this.pages.get(n, this.width, this.heights[n - 1]!);
      el.style.top = px(this.tops[n - 1]!);
      this.shown.set(n, el);
      this.scroller.append(el);
      this.pages.showText(n);
    }
  }
}
