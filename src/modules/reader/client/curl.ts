/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The page curl of the `flip` animation, flat like a sheet of paper lifted by
 * its corner (the geometry StPageFlip and turn.js use), drawn with two CSS
 * clip-paths and one transform per frame, so it costs a few style writes and
 * stays in the book's plane: the flap is kept within the stage's height, so no
 * toolbar ever cuts it.
 *
 * The turning sheet lies on the right (the right page of a spread, or the
 * single page), its spine at x = 0 of its slot. Its corner C is pulled to the
 * point P (the pointer while dragging, a path for a key or button turn); the
 * sheet folds along the perpendicular bisector of C–P: the part beyond the
 * fold is lifted off (showing the page underneath, with a shadow cast along
 * the fold), and its reflection across the fold shows the sheet's back. The
 * back page's own coordinates map to the sheet mirrored (x → W − x), then
 * reflected across the fold: two reflections, so a rotation, never a mirror
 * image. P = C is the sheet flat on the right; P = (−W, C.y), flat on the left.
 */
import { h, px } from './dom.ts';

export interface Point {
  x: number;
  y: number;
}
type Polygon = Point[];

/** The part of the polygon where side(p) >= 0 (Sutherland–Hodgman against one half-plane). */
function clip(polygon: Polygon, side: (p: Point) => number): Polygon {
  const out: Polygon = [];
  for (let i = 0; i < polygon.length; i++) {
    const a = polygon[i]!;
    const b = polygon[(i + 1) % polygon.length]!;
    const sa = side(a);
    const sb = side(b);
    if (sa >= 0) out.push(a);
    if ((sa >= 0) !== (sb >= 0)) {
      const t = sa / (sa - sb);
      out.push({ x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t });
    }
  }
  return out;
}

const path = (polygon: Polygon): string =>
  polygon.length < 3 ? 'polygon(0 0, 0 0, 0 0)' : `polygon(${polygon.map((p) => `${px(p.x)} ${px(p.y)}`).join(', ')})`;

export class Curl {
  /** The container of the lifted part (class `leaf`: a turn is under way while it is in the DOM). */
  readonly el: HTMLElement;
  /** The sheet's front, cut at the fold. */
  readonly sheet: HTMLElement;
  private readonly flap: HTMLElement;
  private readonly flapShade: HTMLElement;
  private readonly cast: HTMLElement;
  private readonly castShade: HTMLElement;
  private readonly w: number;
  private readonly h: number;
  /** Room above and below the book within the stage: the flap never reaches past it (under a toolbar). */
  private readonly margin: number;
  /** The corner pulled: the bottom (y = h) or the top (y = 0) one. */
  readonly cy: number;
  point: Point;

  /**
   * `sheet`: the slot holding the front page (it stays where it is); `back`: the page on the sheet's back,
   * `left`: where the sheet's slot starts in the book, `w` × `h`: the slot's size.
   */
  constructor(sheet: HTMLElement, back: HTMLElement, left: number, w: number, h0: number, top: boolean, margin = 0) {
    this.sheet = sheet;
    this.margin = margin;
    this.w = w;
    this.h = h0;
    this.cy = top ? 0 : h0;
    this.point = { x: w, y: this.cy };
    this.el = h('div', 'leaf curl', { 'aria-hidden': 'true' });
    const box = (cls: string): HTMLElement => {
      const el = h('div', cls);
      Object.assign(el.style, { left: px(left), width: px(w), height: px(h0) });
      return el;
    };
    this.cast = box('cast');
    this.castShade = this.cast.appendChild(h('div', 'band cast-band'));
    this.flap = box('flap');
    this.flap.append(back);
    this.flapShade = this.flap.appendChild(h('div', 'band flap-band'));
    const wrap = this.el.appendChild(h('div', 'flapwrap'));
    this.el.prepend(this.cast);
    wrap.append(this.flap);
  }

  /** How far the sheet has turned, 0 (flat on the right) to 1 (flat on the left). */
  get progress(): number {
    return Math.min(1, Math.max(0, (this.w - this.point.x) / (2 * this.w)));
  }

  /** The point of a turn `t` (0..1) along the path of a key or button turn: the corner lifted a little on the way. */
  along(t: number): Point {
    const lift = this.h * 0.06 * Math.sin(Math.PI * t);
    return { x: this.w - 2 * this.w * t, y: this.cy === 0 ? lift : this.cy - lift };
  }

  /** Where the corner rests flat on either side. */
  rest(turned: boolean): Point {
    return { x: turned ? -this.w : this.w, y: this.cy };
  }

  /** Pulls the corner to `to` (slot coordinates), within what a sheet bound at the spine can reach. */
  set(to: Point): void {
    const { w, h: height, cy } = this;
    let p = { x: Math.min(w, Math.max(-w, to.x)), y: Math.min(height, Math.max(0, to.y)) };
    // The corner stays within the sheet's width of the spine on its own edge, and its diagonal of the other.
    const within = (centre: Point, radius: number) => {
      const dx = p.x - centre.x;
      const dy = p.y - centre.y;
      const d = Math.hypot(dx, dy);
      if (d > radius) p = { x: centre.x + (dx / d) * radius, y: centre.y + (dy / d) * radius };
    };
    within({ x: 0, y: cy }, w);
    within({ x: 0, y: height - cy }, Math.hypot(w, height));
    this.point = p;
    const dx = w - p.x;
    const dy = cy - p.y;
    const length = Math.hypot(dx, dy);
    if (length < 0.5) {
      // Flat: nothing lifted.
      this.sheet.style.clipPath = '';
      this.el.style.visibility = 'hidden';
      return;
    }
    this.el.style.visibility = '';
    const n = { x: dx / length, y: dy / length };
    const m = { x: (w + p.x) / 2, y: (cy + p.y) / 2 };
    const side = (q: Point) => (q.x - m.x) * n.x + (q.y - m.y) * n.y;
    const rect: Polygon = [{ x: 0, y: 0 }, { x: w, y: 0 }, { x: w, y: height }, { x: 0, y: height }];
    const lifted = clip(rect, side);
    this.sheet.style.clipPath = path(clip(rect, (q) => -side(q)));
    this.cast.style.clipPath = path(lifted);
    // The back page: u → (w − u.x, u.y) on the sheet, then reflected across the fold (A = I − 2nnᵀ, t = 2(m·n)n).
    const a00 = 1 - 2 * n.x * n.x;
    const a01 = -2 * n.x * n.y;
    const a11 = 1 - 2 * n.y * n.y;
    const k = 2 * (m.x * n.x + m.y * n.y);
    const matrix = [-a00, -a01, a01, a11, a00 * w + k * n.x, a01 * w + k * n.y];
    this.flap.style.transform = `matrix(${matrix.map((v) => Math.round(v * 1e4) / 1e4).join(',')})`;
    // Where the flap lies on the sheet (the lifted part reflected), kept within the stage's height, then back
    // in the back page's own coordinates (reflected again, mirrored).
    const reflect = (q: Point): Point => {
      const s = 2 * side(q);
      return { x: q.x - s * n.x, y: q.y - s * n.y };
    };
    let flap = lifted.map(reflect);
    flap = clip(flap, (q) => q.y + this.margin);
    flap = clip(flap, (q) => height + this.margin - q.y);
    this.flap.style.clipPath = path(flap.map((q) => {
      const r = reflect(q);
      return { x: w - r.x, y: r.y };
    }));
    // Shadows along the fold, strongest half-way through the turn: cast on the page uncovered, and on the flap.
    const strength = Math.sin(Math.PI * Math.min(1, length / (2 * w)));
    const diagonal = Math.hypot(w, height);
    const band = (el: HTMLElement, at: Point, angle: number, width: number) => {
      el.style.width = px(Math.max(1, width));
      el.style.height = px(diagonal * 2);
      el.style.transform = `translate(${px(at.x)},${px(at.y)}) rotate(${angle}rad) translate(0,${px(-diagonal)})`;
      el.style.opacity = String(Math.round(strength * 100) / 100);
    };
    band(this.castShade, m, Math.atan2(n.y, n.x), Math.min(length / 2, w * 0.3));
    band(this.flapShade, { x: w - m.x, y: m.y }, Math.atan2(n.y, -n.x), Math.min(length / 3, w * 0.2));
  }
}
