/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Pointer input on the paged book: swipes, and taps on the outer fifths, turn
 * pages; a double click or double tap zooms to the point (or back out),
 * never turning twice; two fingers pinch; Ctrl/⌘ + wheel (and the trackpad's
 * pinch, which browsers send as Ctrl + wheel) zooms about the pointer; once
 * zoomed, a drag or the wheel pans. With the `flip` animation, a drag from
 * the book's outer fifths (any drag sideways on a touch screen) curls the
 * page under the pointer and completes or springs back on release (paged.ts);
 * a mouse drag that starts on a run of the page's text selects text instead.
 */
import type { Drag } from './paged.ts';
import type { Zoom } from './zoom.ts';

export interface GestureHost {
  stage: HTMLElement;
  zoom: Zoom;
  rtl: boolean;
  /** Whether the paged view is showing (no gestures in the scroll view). */
  paged(): boolean;
  /** One view forward (1) or back (-1) in reading order. */
  step(delta: 1 | -1): void;
  /** Starts a dragged turn `delta` views away in reading order (null: not possible now). */
  grab(delta: 1 | -1, clientX: number, clientY: number): Drag | null;
}

/** A double tap: the second within this long of the first, this close to it. */
const DOUBLE_MS = 350;
const DOUBLE_PX = 30;
const DOUBLE_ZOOM = 2.5;

export function setupGestures(host: GestureHost): void {
  const { stage, zoom } = host;
  const pointers = new Map<number, { x: number; y: number }>();
  let gesture: {
    kind: 'tap' | 'select' | 'pinch'; id: number; x0: number; y0: number; x: number; y: number; moved: boolean;
    /** The outer fifth it started on (-1 left, 1 right, 0 neither), the turn it drags, its speed (px/ms). */
    side: -1 | 0 | 1; drag: Drag | null; vx: number; t: number;
  } | null = null;
  /** A drag ends with a click on the element under the pointer: that click must not turn again. */
  let dragged = false;
  let pinch: { distance: number; mx: number; my: number } | null = null;
  let lastTap = { time: 0, x: 0, y: 0, turned: false };
  /** Double taps on touch screens are detected here; the browser's dblclick is for the mouse only. */
  let lastPointer = 'mouse';

  const local = (x: number, y: number) => {
    const box = stage.getBoundingClientRect();
    return { x: x - box.left, y: y - box.top };
  };
  /** -1 on the left fifth of the book, 1 on the right fifth, 0 in between (or off the book). */
  const edge = (x: number, target: EventTarget | null): -1 | 0 | 1 => {
    const book = stage.querySelector('.book');
    if (!book || !(target instanceof Element) || !book.contains(target)) return 0;
    const box = book.getBoundingClientRect();
    const at = (x - box.left) / box.width;
    return at < 0.2 ? -1 : at > 0.8 ? 1 : 0;
  };
  const turnFrom = (side: -1 | 1) => host.step(((side > 0) !== host.rtl ? 1 : -1) as 1 | -1);
  const toggleZoom = (x: number, y: number) => {
    const p = local(x, y);
    if (zoom.zoomed) zoom.reset();
    else zoom.to(DOUBLE_ZOOM, p.x, p.y);
  };
  const pinchOf = () => {
    const [a, b] = [...pointers.values()];
    return { distance: Math.hypot(a!.x - b!.x, a!.y - b!.y), mx: (a!.x + b!.x) / 2, my: (a!.y + b!.y) / 2 };
  };

  stage.addEventListener('pointerdown', (event) => {
    lastPointer = event.pointerType;
    if (!host.paged() || (event.pointerType === 'mouse' && event.button !== 0)) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pointers.size === 2) {
      pinch = pinchOf();
      if (gesture) gesture.kind = 'pinch';
      return;
    }
    if (pointers.size > 2) return;
    const target = event.target as Element;
    // A mouse drag from a run of text selects it; from anywhere else (margins, pictures) it turns.
    const onText = event.pointerType === 'mouse' && target.closest('.textlayer span') !== null;
    gesture = {
      kind: onText ? 'select' : 'tap', id: event.pointerId, x0: event.clientX, y0: event.clientY, x: event.clientX, y: event.clientY, moved: false,
      side: edge(event.clientX, target), drag: null, vx: 0, t: event.timeStamp,
    };
    dragged = false;
  });

  stage.addEventListener('pointermove', (event) => {
    if (!pointers.has(event.pointerId)) return;
    pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
    if (pinch && pointers.size === 2) {
      const now = pinchOf();
      const at = local(now.mx, now.my);
      zoom.by(now.distance / Math.max(1, pinch.distance), at.x, at.y);
      zoom.pan(now.mx - pinch.mx, now.my - pinch.my);
      pinch = now;
      return;
    }
    if (!gesture || gesture.id !== event.pointerId || gesture.kind !== 'tap') return;
    const dx = event.clientX - gesture.x0;
    if (Math.abs(dx) > 6 || Math.abs(event.clientY - gesture.y0) > 6) gesture.moved = true;
    if (zoom.zoomed && gesture.moved) zoom.pan(event.clientX - gesture.x, event.clientY - gesture.y);
    else if (gesture.moved && !gesture.drag) {
      // The mouse turns from the book's outer fifths (its middle is for text); a finger from anywhere, sideways.
      const side = event.pointerType === 'mouse' ? gesture.side : Math.abs(dx) > Math.abs(event.clientY - gesture.y0) ? (dx < 0 ? 1 : -1) : 0;
      if (side !== 0) {
        gesture.drag = host.grab(((side > 0) !== host.rtl ? 1 : -1) as 1 | -1, gesture.x0, gesture.y0);
        if (gesture.drag) stage.setPointerCapture?.(event.pointerId);
      }
    }
    if (gesture.drag) {
      gesture.drag.move(event.clientX, event.clientY);
      const dt = event.timeStamp - gesture.t;
      if (dt > 0) gesture.vx = 0.6 * ((event.clientX - gesture.x) / dt) + 0.4 * gesture.vx;
    }
    gesture.t = event.timeStamp;
    gesture.x = event.clientX;
    gesture.y = event.clientY;
  });

  const end = (event: PointerEvent, cancelled: boolean): void => {
    if (!pointers.delete(event.pointerId)) return;
    if (pointers.size < 2) pinch = null;
    const current = gesture;
    if (!current || current.id !== event.pointerId) {
      if (pointers.size === 0) gesture = null;
      return;
    }
    gesture = null;
    if (current.drag) {
      dragged = true;
      if (cancelled) current.drag.release(current.x0, current.y0, 0);
      // A pointer held still before release is not a flick.
      else current.drag.release(event.clientX, event.clientY, event.timeStamp - current.t > 100 ? 0 : current.vx);
      return;
    }
    if (cancelled || current.kind !== 'tap') return;
    const dx = event.clientX - current.x0;
    const dy = event.clientY - current.y0;
    if (current.moved) {
      if (!zoom.zoomed && Math.abs(dx) > 40 && Math.abs(dx) > Math.abs(dy) * 1.2) host.step(((dx < 0) !== host.rtl ? 1 : -1) as 1 | -1);
      return;
    }
    // A tap. The mouse's are handled as clicks (below), where the browser counts double clicks.
    if (event.pointerType === 'mouse') return;
    const target = event.target as Element;
    if (target.closest('a, button, input')) return;
    const now = performance.now();
    const side = edge(event.clientX, target);
    if (now - lastTap.time < DOUBLE_MS && Math.hypot(event.clientX - lastTap.x, event.clientY - lastTap.y) < DOUBLE_PX) {
      // The second tap of a double tap: zoom there, unless the first one turned the page.
      const turned = lastTap.turned;
      lastTap = { time: 0, x: 0, y: 0, turned: false };
      if (!turned) toggleZoom(event.clientX, event.clientY);
      return;
    }
    const turns = !zoom.zoomed && side !== 0;
    lastTap = { time: now, x: event.clientX, y: event.clientY, turned: turns };
    if (turns) turnFrom(side as -1 | 1);
  };
  stage.addEventListener('pointerup', (event) => end(event, false));
  stage.addEventListener('pointercancel', (event) => end(event, true));

  // Mouse clicks: one on an outer fifth turns; the second click of a double click never turns again.
  stage.addEventListener('click', (event) => {
    if (dragged) {
      dragged = false;
      return;
    }
    if (!host.paged() || event.detail > 1 || zoom.zoomed) return;
    if ((event as PointerEvent).pointerType && (event as PointerEvent).pointerType !== 'mouse') return;
    const target = event.target as Element;
    if (target.closest('a, button, input') || String(getSelection() ?? '') !== '') return;
    const side = edge(event.clientX, target);
    if (side !== 0) turnFrom(side);
  });
  stage.addEventListener('dblclick', (event) => {
    if (!host.paged() || lastPointer !== 'mouse' || (edge(event.clientX, event.target) !== 0 && !zoom.zoomed)) return;
    if ((event.target as Element).closest('a, button, input')) return;
    getSelection()?.removeAllRanges();
    toggleZoom(event.clientX, event.clientY);
  });

  stage.addEventListener('wheel', (event) => {
    if (!host.paged()) return;
    if (event.ctrlKey || event.metaKey) {
      event.preventDefault();
      const p = local(event.clientX, event.clientY);
      zoom.by(Math.exp(-event.deltaY * 0.01), p.x, p.y);
    } else if (zoom.zoomed) {
      event.preventDefault();
      zoom.pan(-event.deltaX, -event.deltaY);
    }
  }, { passive: false });
}
