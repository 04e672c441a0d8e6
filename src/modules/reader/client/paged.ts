/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The paged reader: one view at a time (a spread of two pages, or a single
 * page), and the animations between views: flip (a 3D page turn around the
 * spine), slide, fade, zoom, flick-through (the sheet is flicked away; a jump
 * riffles blank sheets) and cut. Right-to-left books mirror the book and
 * un-mirror each page, so the geometry below is always left-to-right.
 *
 * Spreads: the cover is alone on the right (view 0), then 2|3, 4|5, ...
 */
import { fit, h, px } from './dom.ts';
import type { Pages } from './pages.ts';

export interface PagedOptions {
  spread: boolean;
  animation: string;
  rtl: boolean;
}

type Slot = number | null;

const DURATION: Record<string, number> = { flip: 650, slide: 380, fade: 320, zoom: 360, 'flick-through': 300 };

export class PagedView {
  readonly kind = 'paged';
  private readonly stage: HTMLElement;
  private readonly pages: Pages;
  private readonly book: HTMLElement;
  private readonly spread: boolean;
  private readonly animation: string;
  private readonly rtl: boolean;
  /** The view on screen. */
  private index = -1;
  /** The view being shown: the same, or one waiting for its images to be decoded. */
  private target = -1;
  private ticket = 0;
  private viewEl: HTMLElement | null = null;
  private slotW = 0;
  private slotH = 0;
  private stageW = 0;
  private running: { animations: Animation[]; done: () => void } | null = null;

  constructor(stage: HTMLElement, pages: Pages, options: PagedOptions) {
    this.stage = stage;
    this.pages = pages;
    this.spread = options.spread;
    this.animation = options.animation;
    this.rtl = options.rtl;
    this.book = h('div', `book ${options.spread ? 'spread' : 'single'}${options.rtl ? ' rtl' : ''}`);
    stage.append(this.book);
  }

  destroy(): void {
    this.finish();
    this.book.remove();
  }

  private get viewCount(): number {
    return this.spread ? Math.floor(this.pages.count / 2) + 1 : this.pages.count;
  }

  private viewOf(page: number): number {
    return this.spread ? Math.floor(page / 2) : page - 1;
  }

  /** [left, right] in spreads, [page] otherwise. */
  private pagesOf(view: number): Slot[] {
    if (!this.spread) return [view + 1];
    const left = view === 0 ? null : 2 * view;
    const right = 2 * view + 1 <= this.pages.count ? 2 * view + 1 : null;
    return [left, right];
  }

  firstOf(page: number): number {
    const [a, b] = this.pagesOf(this.viewOf(page));
    return (a ?? b)!;
  }

  visible(): number[] {
    return this.pagesOf(this.target).filter((n): n is number => n !== null);
  }

  /** First page of the view `delta` views away, or null past either end. */
  neighbour(page: number, delta: number): number | null {
    const view = this.viewOf(page) + delta;
    if (view < 0 || view >= this.viewCount) return null;
    return this.firstOf(this.spread ? Math.max(1, view * 2) : view + 1);
  }

  layout(width: number, height: number): void {
    this.finish();
    const pad = width < 600 || height < 420 ? 8 : 20;
    const ratio = this.pages.ratio(1);
    const box = fit(Math.max(1, width - 2 * pad), Math.max(1, height - 2 * pad), this.spread ? ratio * 2 : ratio);
    this.slotW = this.spread ? box.width / 2 : box.width;
    this.slotH = box.height;
    this.stageW = width;
    Object.assign(this.book.style, { left: px((width - box.width) / 2), top: px((height - box.height) / 2), width: px(box.width), height: px(box.height) });
    if (this.index >= 0) this.render(this.index);
  }

  /** Size of page n inside a slot. `sharp`: load its sharp image now (false for preloads). */
  private place(n: number, sharp = true): HTMLElement {
    const size = fit(this.slotW, this.slotH, this.pages.ratio(n));
    const el = this.pages.get(n, size.width, size.height, sharp);
    el.style.top = '';
    return el;
  }

  private slot(cls: string, n: Slot): HTMLElement {
    const el = h('div', `slot ${cls}`);
    if (n !== null) el.append(this.place(n));
    return el;
  }

  private build(slots: Slot[]): HTMLElement {
    const view = h('div', 'view');
    if (this.spread) view.append(this.slot('l', slots[0] ?? null), this.slot('r', slots[1] ?? null));
    else view.append(this.slot('s', slots[0] ?? null));
    return view;
  }

  /** The cover (alone on the right) and a last even page (alone on the left) are centred. */
  private shift(view: number): string {
    if (!this.spread) return '0px 0px';
    const [left, right] = this.pagesOf(view);
    const offset = left === null ? -this.slotW / 2 : right === null ? this.slotW / 2 : 0;
    // translate applies after the mirroring scale of a right-to-left book, so it is mirrored by hand.
    return `${px(this.rtl ? -offset : offset)} 0px`;
  }

  private render(view: number): void {
    this.viewEl = this.build(this.pagesOf(view));
    this.book.replaceChildren(this.viewEl);
    this.book.style.translate = this.shift(view);
    this.index = view;
    this.target = view;
    for (const n of this.visible()) this.pages.showText(n);
    this.onShown?.();
  }

  /** Called each time a view is on screen (after a turn's animation). */
  onShown: (() => void) | null = null;

  /**
   * Shows the view holding `page`; animated unless `animate` is false. Returns whether the view changed.
   * The view changes only once its pages have a decoded image (at once when they were preloaded), so no
   * animation ever shows a white page.
   */
  show(page: number, animate: boolean): boolean {
    this.finish();
    const target = this.viewOf(page);
    if (target === this.target && this.viewEl) return false;
    this.target = target;
    const ticket = ++this.ticket;
    const numbers = this.pagesOf(target).filter((n): n is number => n !== null);
    for (const n of numbers) this.place(n);
    const go = (): void => {
      if (ticket !== this.ticket) return;
      this.finish();
      const from = this.index;
      if (target === from && this.viewEl) return;
      if (!animate || from < 0 || !this.viewEl || this.animation === 'cut' || !DURATION[this.animation]) {
        this.render(target);
      } else {
        this.transition(from, target);
      }
      this.preload(target, ticket);
    };
    if (numbers.every((n) => this.pages.isReady(n))) go();
    else void Promise.all(numbers.map((n) => this.pages.ready(n))).then(go);
    return true;
  }

  /** Loads the views in order of need (next, previous, the one after next) once the current one is shown. */
  private preload(view: number, ticket: number): void {
    const current = this.pagesOf(view).filter((n): n is number => n !== null);
    void Promise.all(current.map((n) => this.pages.ready(n))).then(() => {
      if (ticket !== this.ticket) return;
      for (const v of [view + 1, view - 1, view + 2]) {
        if (v < 0 || v >= this.viewCount) continue;
        for (const n of this.pagesOf(v)) if (n !== null) this.place(n, false);
      }
    });
  }

  /** Ends a running animation at once, in its final state. */
  finish(): void {
    const running = this.running;
    if (!running) return;
    this.running = null;
    for (const animation of running.animations) animation.cancel();
    running.done();
  }

  private transition(from: number, to: number): void {
    const dir = to > from ? 1 : -1;
    const duration = DURATION[this.animation]!;
    const old = this.viewEl!;
    const animations: Animation[] = [];
    const timing = (extra: KeyframeAnimationOptions = {}): KeyframeAnimationOptions => ({ duration, easing: 'ease-in-out', fill: 'both', ...extra });
    const shiftFrom = this.shift(from);
    const shiftTo = this.shift(to);
    if (shiftFrom !== shiftTo) animations.push(this.book.animate([{ translate: shiftFrom }, { translate: shiftTo }], timing({ fill: 'none' })));
    this.book.style.translate = shiftTo;

    switch (this.animation) {
      case 'flip': {
        const [fromL, fromR] = this.pagesOf(from);
        const [toL, toR] = this.pagesOf(to);
        let under: HTMLElement;
        let leaf: HTMLElement;
        if (this.spread) {
          under = dir > 0 ? this.build([fromL ?? null, toR ?? null]) : this.build([toL ?? null, fromR ?? null]);
          leaf = dir > 0 ? this.leaf(fromR ?? null, toL ?? null) : this.leaf(toR ?? null, fromL ?? null);
        } else {
          under = this.build([dir > 0 ? to + 1 : from + 1]);
          leaf = this.leaf(dir > 0 ? from + 1 : to + 1, null);
        }
        this.book.replaceChildren(under, leaf);
        const turn = [{ transform: 'rotateY(0deg)' }, { transform: 'rotateY(-180deg)' }];
        animations.push(leaf.animate(dir > 0 ? turn : turn.reverse(), timing({ easing: 'cubic-bezier(.4,.1,.3,1)' })));
        for (const shade of leaf.querySelectorAll('.shade')) {
          animations.push(shade.animate([{ opacity: 0 }, { opacity: 0.55 }, { opacity: 0 }], timing()));
        }
        break;
      }
      case 'slide': {
        const next = this.build(this.pagesOf(to));
        this.book.append(next);
        const distance = px(((this.stageW + this.book.offsetWidth) / 2 + 24) * dir);
        const back = px(-parseFloat(distance));
        animations.push(old.animate([{ transform: 'translateX(0)' }, { transform: `translateX(${back})` }], timing()));
        animations.push(next.animate([{ transform: `translateX(${distance})` }, { transform: 'translateX(0)' }], timing()));
        break;
      }
      case 'fade': {
        const next = this.build(this.pagesOf(to));
        this.book.append(next);
        // Only the new view fades in, over the old one kept opaque: never a grey, half-transparent page.
        animations.push(next.animate([{ opacity: 0 }, { opacity: 1 }], timing()));
        break;
      }
      case 'zoom': {
        const next = this.build(this.pagesOf(to));
        this.book.append(next);
        const out = dir > 0 ? 1.3 : 0.75;
        const into = dir > 0 ? 0.75 : 1.3;
        // The old view grows (or shrinks) away underneath, opaque; the new one comes in over it.
        animations.push(old.animate([{ transform: 'scale(1)' }, { transform: `scale(${out})` }], timing()));
        animations.push(next.animate([{ transform: `scale(${into})`, opacity: 0 }, { transform: 'scale(1)', opacity: 1 }], timing()));
        break;
      }
      case 'flick-through': {
        const next = this.build(this.pagesOf(to));
        // A jump riffles up to five blank sheets between the two views.
        const sheets = Math.min(Math.abs(to - from) - 1, 5);
        const blanks: HTMLElement[] = [];
        for (let i = 0; i < sheets; i++) {
          const sheet = this.build([]);
          const slot = sheet.lastElementChild as HTMLElement;
          slot.className = this.spread ? `slot ${dir > 0 ? 'r' : 'l'}` : 'slot s';
          slot.append(this.pages.blank(this.slotW, this.slotH));
          blanks.push(sheet);
        }
        const away = { transform: 'translateX(-75%) rotate(-14deg)', opacity: 0 };
        const rest = { transform: 'none', opacity: 1 };
        if (dir > 0) {
          // The current sheet, then each blank, is flicked off to the left, uncovering the next.
          this.book.replaceChildren(next, ...blanks, old);
          [old, ...blanks.reverse()].forEach((sheet, i) => {
            sheet.classList.add('flick');
            animations.push(sheet.animate([rest, away], timing({ easing: 'ease-in', delay: i * duration * 0.45 })));
          });
        } else {
          // Sheets are flicked back in from the left, the target view last, on top.
          this.book.replaceChildren(old, ...blanks, next);
          [...blanks, next].forEach((sheet, i) => {
            sheet.classList.add('flick');
            animations.push(sheet.animate([away, rest], timing({ easing: 'ease-out', delay: i * duration * 0.45 })));
          });
        }
        break;
      }
    }

    const running = {
      animations,
      done: () => this.render(to),
    };
    this.running = running;
    this.index = to;
    this.target = to;
    void Promise.all(animations.map((a) => a.finished)).then(
      () => {
        if (this.running === running) this.finish();
      },
      () => undefined,
    );
  }

  /** A turning sheet: `front` shows on the right (or the single page), `back` once it has turned over to the left. */
  private leaf(front: Slot, back: Slot): HTMLElement {
    const leaf = h('div', 'leaf');
    const frontFace = h('div', 'face f');
    const backFace = h('div', 'face b');
    if (front !== null) frontFace.append(this.place(front));
    if (back !== null) backFace.append(this.place(back));
    else if (this.spread) backFace.append(this.pages.blank(this.slotW, this.slotH));
    frontFace.append(h('div', 'shade'));
    backFace.append(h('div', 'shade'));
    leaf.append(frontFace, backFace);
    return leaf;
  }
}
