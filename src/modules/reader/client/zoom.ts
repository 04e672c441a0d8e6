/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The reader's own zoom (paged views): the book sits in a layer that is
 * scaled and moved with one CSS transform. Zoom about a point (the pointer,
 * the pinch's centre, the tap), pan within the page's bounds, steps for the
 * buttons and keys. Once a zoom level settles, `onSettle` asks the pages for
 * renditions sharp at that level (pages.ts: loaded for the pages on screen only).
 */

export const ZOOM_STEPS = [1, 1.5, 2, 3, 4, 6];
export const MAX_ZOOM = ZOOM_STEPS[ZOOM_STEPS.length - 1]!;

export class Zoom {
  scale = 1;
  private x = 0;
  private y = 0;
  private settleTimer = 0;
  private readonly layer: HTMLElement;
  private readonly stage: HTMLElement;
  private readonly onSettle: (scale: number) => void;

  constructor(stage: HTMLElement, layer: HTMLElement, onSettle: (scale: number) => void) {
    this.stage = stage;
    this.layer = layer;
    this.onSettle = onSettle;
  }

  get zoomed(): boolean {
    return this.scale > 1.001;
  }

  /** Zooms to `scale` about the stage point (cx, cy); the centre of the stage by default. */
  to(scale: number, cx = this.stage.clientWidth / 2, cy = this.stage.clientHeight / 2): void {
    const next = Math.min(MAX_ZOOM, Math.max(1, scale));
    const factor = next / this.scale;
    this.x = cx - (cx - this.x) * factor;
    this.y = cy - (cy - this.y) * factor;
    this.scale = next;
    this.apply();
  }

  by(factor: number, cx?: number, cy?: number): void {
    this.to(this.scale * factor, cx, cy);
  }

  /** The next step up or down from the current scale. */
  step(direction: 1 | -1): void {
    const next = direction > 0 ? ZOOM_STEPS.find((s) => s > this.scale + 0.01) : [...ZOOM_STEPS].reverse().find((s) => s < this.scale - 0.01);
    this.to(next ?? this.scale);
  }

  pan(dx: number, dy: number): void {
    this.x += dx;
    this.y += dy;
    this.apply();
  }

  reset(): void {
    if (this.scale === 1 && this.x === 0 && this.y === 0) return;
    this.scale = 1;
    this.x = 0;
    this.y = 0;
    this.apply();
  }

  private apply(): void {
    // The zoomed stage is always covered: no panning past the book's layer.
    const width = this.stage.clientWidth;
    const height = this.stage.clientHeight;
    this.x = Math.min(0, Math.max(width - width * this.scale, this.x));
    this.y = Math.min(0, Math.max(height - height * this.scale, this.y));
    this.layer.style.transform = this.zoomed ? `translate(${this.x}px, ${this.y}px) scale(${this.scale})` : '';
    const root = document.documentElement;
    root.dataset.zoom = String(Math.round(this.scale * 100) / 100);
    this.stage.classList.toggle('zoomed', this.zoomed);
    clearTimeout(this.settleTimer);
    // Renditions are picked once the pinch or wheel comes to rest, not at every step of it.
    this.settleTimer = window.setTimeout(() => this.onSettle(this.scale), 120);
  }
}
