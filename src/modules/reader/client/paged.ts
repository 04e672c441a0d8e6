/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The paged reader: one view at a time (a spread of two pages, or a single
 * page), and the animations between views: flip (a page curl, curl.ts, that
 * also follows the reader's finger or mouse from a corner or edge), slide,
 * fade, zoom, flick-through (the sheet is flicked away; a jump riffles blank
 * sheets) and cut. Right-to-left books mirror the book and
 * un-mirror each page, so the geometry below is always left-to-right.
 *
 * Spreads: the cover is alone on the right (view 0), then 2|3, 4|5, ...
 */
import { fit, h, px } from './dom.ts';
import { Curl, type Point } from './curl.ts';
import type { Pages } from './pages.ts';

/** A turn the reader drags (gestures.ts): the corner follows the pointer; release completes or springs back. */
export interface Drag {
  move(clientX: number, clientY: number): void;
  /** `vx`: the pointer's horizontal speed at release (px/ms, screen direction). */
  release(clientX: number, clientY: number, vx: number): void;
}

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
  /** Room between the book and the stage's top and bottom edges. */
  private marginY = 0;
  private running: { animations: Animation[]; frame?: number; done: () => void } | null = null;

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
    this.marginY = (height - box.height) / 2;
    Object.assign(this.book.style, { left: px((width - box.width) / 2), top: px((height - box.height) / 2), width: px(box.width), height: px(box.height) });
    if (this.index >= 0) this.render(this.index);
  }

  /** Page n's element, sized for a slot (its images load as Pages.focus decides). */
  private place(n: number): HTMLElement {
    const size = fit(this.slotW, this.slotH, this.pages.ratio(n));
    const el = this.pages.get(n, size.width, size.height);
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
    // The view left behind is off screen now: its sharp images go (the next view's stay).
    this.pages.settle();
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
    const direction = this.target < 0 ? 1 : Math.sign(target - this.target);
    this.target = target;
    const ticket = ++this.ticket;
    const numbers = this.pagesOf(target).filter((n): n is number => n !== null);
    this.focus(target, direction);
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

  /** Tells Pages what is shown and which way the reader goes: it fetches around it (stand-ins ahead, sharp images). */
  private focus(view: number, direction: number): void {
    const ahead = view + (direction < 0 ? -1 : 1);
    const next = ahead >= 0 && ahead < this.viewCount ? this.pagesOf(ahead) : [];
    const real = (slots: Slot[]) => slots.filter((n): n is number => n !== null);
    this.pages.focus(real(this.pagesOf(view)), direction, real(next));
  }

  /** Sizes the views a turn can reach (next, previous, the one after next) once the current one is shown. */
  private preload(view: number, ticket: number): void {
    const current = this.pagesOf(view).filter((n): n is number => n !== null);
    void Promise.all(current.map((n) => this.pages.ready(n))).then(() => {
      if (ticket !== this.ticket) return;
      for (const v of [view + 1, view - 1, view + 2]) {
        if (v < 0 || v >= this.viewCount) continue;
        for (const n of this.pagesOf(v)) if (n !== null) this.place(n);
      }
    });
  }

  /** Ends a running animation at once, in its final state. */
  finish(): void {
    const running = this.running;
    if (!running) return;
    this.running = null;
    for (const animation of running.animations) animation.cancel();
    if (running.frame) cancelAnimationFrame(running.frame);
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
        const curl = this.curl(from, to);
        const start = performance.now();
        const ease = (t: number) => (t < 0.5 ? 2 * t * t : 1 - (-2 * t + 2) ** 2 / 2);
        const running = { animations, frame: 0, done: () => this.render(to) };
        const frame = (now: number) => {
          const t = Math.min(1, (now - start) / duration);
          curl.set(curl.along(dir > 0 ? ease(t) : 1 - ease(t)));
          if (t < 1) running.frame = requestAnimationFrame(frame);
          else if (this.running === running) this.finish();
        };
        curl.set(curl.along(dir > 0 ? 0 : 1));
        running.frame = requestAnimationFrame(frame);
        this.running = running;
        this.index = to;
        this.target = to;
        return;
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

  /**
   * Lays out a curl from view `from` to the next or previous view `to`: the view underneath, the sheet's
   * front (cut at the fold) and its lifted part. The sheet is always on the right: a turn back is a turn
   * forward played in reverse (its sheet starts flat on the left).
   */
  private curl(from: number, to: number, top = false): Curl {
    const forward = to > from;
    const [fromL, fromR] = this.pagesOf(from);
    const [toL, toR] = this.pagesOf(to);
    let under: HTMLElement;
    let front: Slot;
    let back: Slot;
    if (this.spread) {
      under = forward ? this.build([fromL ?? null, toR ?? null]) : this.build([toL ?? null, fromR ?? null]);
      front = forward ? (fromR ?? null) : (toR ?? null);
      back = forward ? (toL ?? null) : (fromL ?? null);
    } else {
      under = this.build([forward ? to + 1 : from + 1]);
      front = forward ? from + 1 : to + 1;
      back = null;
    }
    const sheet = this.slot(this.spread ? 'r sheet' : 's sheet', front);
    const backPage = back !== null ? this.place(back) : this.pages.blank(this.slotW, this.slotH);
    const curl = new Curl(sheet, backPage, this.spread ? this.slotW : 0, this.slotW, this.slotH, top, Math.max(0, this.marginY));
    curl.el.classList.add(this.spread ? 'to-l' : 'to-s');
    this.book.replaceChildren(under, sheet, curl.el);
    return curl;
  }

  /** Called when a dragged turn completes, with the first page of the view turned to. */
  onTurn: ((page: number) => void) | null = null;

  /**
   * Starts a turn the reader drags, `delta` views away, from the screen point (clientX, clientY); null when
   * there is nothing to turn to, the animation is not `flip`, or the pages there have no image yet.
   */
  grab(delta: 1 | -1, clientX: number, clientY: number): Drag | null {
    if (this.animation !== 'flip' || this.running || this.index < 0 || this.target !== this.index) return null;
    const from = this.index;
    const to = from + delta;
    if (to < 0 || to >= this.viewCount) return null;
    const needed = this.pagesOf(to).filter((n): n is number => n !== null);
    for (const n of needed) this.place(n);
    if (!needed.every((n) => this.pages.isReady(n))) return null;
    const box = this.book.getBoundingClientRect();
    const scale = box.width / (this.book.offsetWidth || 1);
    // Book coordinates (a right-to-left book is drawn mirrored), then the sheet's slot.
    const local = (x: number, y: number): Point => {
      const bx = (this.rtl ? box.right - x : x - box.left) / scale;
      return { x: bx - (this.spread ? this.slotW : 0), y: (y - box.top) / scale };
    };
    const origin = local(clientX, clientY);
    const curl = this.curl(from, to, origin.y < this.slotH / 2);
    const forward = delta > 0;
    const start = curl.rest(!forward);
    // On a single page the corner travels twice the page's width: it follows the pointer at twice its pace.
    const pace = this.spread ? 1 : 2;
    const pointAt = (x: number, y: number): Point => {
      const at = local(x, y);
      return { x: start.x + (at.x - origin.x) * pace, y: start.y + (at.y - origin.y) };
    };
    curl.set(start);
    const running = { animations: [] as Animation[], frame: 0, done: () => this.render(from) };
    this.running = running;
    let released = false;
    return {
      move: (x, y) => {
        if (released || this.running !== running) return;
        curl.set(pointAt(x, y));
      },
      release: (x, y, vx) => {
        if (released || this.running !== running) return;
        released = true;
        curl.set(pointAt(x, y));
        // Past a third of the way, or flicked that way: the turn completes; otherwise the sheet falls back.
        const speed = (this.rtl ? -vx : vx) * (forward ? -1 : 1);
        const progress = forward ? curl.progress : 1 - curl.progress;
        const complete = progress > 0.35 || speed > 0.4;
        const end = curl.rest(forward === complete);
        const from0 = curl.point;
        const distance = Math.hypot(end.x - from0.x, end.y - from0.y) / (2 * this.slotW);
        const duration = 120 + 380 * Math.min(1, distance);
        if (complete) {
          running.done = () => this.render(to);
          this.index = to;
          this.target = to;
          this.focus(to, delta);
          const shiftTo = this.shift(to);
          const shiftFrom = this.shift(from);
          if (shiftFrom !== shiftTo) running.animations.push(this.book.animate([{ translate: shiftFrom }, { translate: shiftTo }], { duration, easing: 'ease-out' }));
          this.book.style.translate = shiftTo;
          this.onTurn?.(this.firstOf(this.spread ? Math.max(1, to * 2) : to + 1));
          this.preload(to, this.ticket);
        }
        const t0 = performance.now();
        const frame = (now: number) => {
          const t = Math.min(1, (now - t0) / duration);
          const e = 1 - (1 - t) ** 3;
          curl.set({ x: from0.x + (end.x - from0.x) * e, y: from0.y + (end.y - from0.y) * e });
          if (t < 1) running.frame = requestAnimationFrame(frame);
          else if (this.running === running) this.finish();
        };
        running.frame = requestAnimationFrame(frame);
      },
    };
  }
}
