/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The reader's browser code: takes over the server-rendered page, lays the
 * book out for the screen (spreads when wide, single pages when narrow, the
 * scroll view when the book asks for it), and turns pages on buttons, keys,
 * swipes, clicks, links and #page=N. The book's reading direction, page
 * layout and slideshow come from its settings, overridden by ?dir=,
 * ?layout= and ?autoplay= in the URL; readers switch one or two pages and
 * the slideshow from the toolbar.
 */
import type { ReaderData } from '../reader.types.ts';
import { byId, h, reducedMotion } from './dom.ts';
import { setupGestures } from './gestures.ts';
import { PagedView } from './paged.ts';
import { Pages } from './pages.ts';
import { setupPanels } from './panels.ts';
import { ScrollView } from './scroll.ts';
import { TurnSound } from './sound.ts';
import { setupLeadForm } from './lead.ts';
import { setupEmbed } from './embed.ts';
import { startTracking } from './tracking.ts';
import { startLivePrices } from './live-prices.ts';
import { Zoom } from './zoom.ts';
import { watchVersion } from './version.ts';

const ANIMATIONS = ['flip', 'scroll_view', 'slide', 'fade', 'zoom', 'flick-through', 'cut'];

function start(): void {
  const dataEl = byId('reader-data');
  const stage = byId('stage');
  if (!dataEl || !stage) return;
  const data = JSON.parse(dataEl.textContent!) as ReaderData;
  const root = document.documentElement;
  const total = data.pages.length;
  if (total === 0) return;
  const params = new URLSearchParams(location.search);
  const dirParam = params.get('dir');
  const rtl = dirParam === 'rtl' || dirParam === 'ltr' ? dirParam === 'rtl' : data.dir === 'rtl';
  const layoutParam = params.get('layout');
  /** auto: two pages when wide enough; single or double: the reader's (or the book's) choice. */
  let pageLayout = layoutParam === 'single' || layoutParam === 'double' || layoutParam === 'auto' ? layoutParam : (data.layout ?? 'auto');
  const autoParam = params.get('autoplay');
  const forced = params.get('animation');
  const pages = new Pages(data);
  const tracker = startTracking(data);
  const live = data.live ? startLivePrices(data) : null;
  const sound = new TurnSound(data.snd);
  const announcer = byId('announcer')!;
  const input = byId<HTMLInputElement>('page-input')!;
  const prevButton = byId('prev')!;
  const nextButton = byId('next')!;

  // The paged book lives in a layer the reader's own zoom scales and moves.
  const layer = stage.appendChild(h('div', 'zoomer'));
  const zoomIn = byId('zoom-in');
  const zoomOut = byId('zoom-out');
  const zoom = new Zoom(stage, layer, (scale) => {
    if (view) pages.setZoom(scale, view.visible());
    zoomIn?.setAttribute('aria-disabled', String(scale >= 5.99));
    zoomOut?.setAttribute('aria-disabled', String(scale <= 1));
  });

  let view: PagedView | ScrollView | null = null;
  let mode = '';
  let current = 1;
  /** The slideshow (below): its timer, and whether it runs. */
  let autoTimer = 0;
  let playing = false;
  const embedLayout = setupEmbed(data, () => current);
  const version = watchVersion(data, () => current);

  const pageFromHash = (): number | null => {
    const match = /(?:^#|&)page=(\d+)/.exec(location.hash);
    if (!match) return null;
    return Math.min(Math.max(1, Number(match[1])), total);
  };

  const label = (visible: number[]): string =>
    visible.length > 1 ? `Pages ${visible[0]}–${visible[visible.length - 1]} of ${total}` : `Page ${visible[0] ?? current} of ${total}`;

  // The download offers the page or spread shown when the book's download mode says so (the server decides).
  const downloadLink = document.querySelector<HTMLAnchorElement>('#download');
  const downloadBase = downloadLink?.getAttribute('href') ?? null;

  /** Everything that follows the current page: the page field, buttons, download, URL, announcement. */
  const changed = (announce: boolean): void => {
    const visible = view?.visible() ?? [current];
    if (downloadLink && downloadBase) downloadLink.setAttribute('href', `${downloadBase}?page=${visible[0] ?? current}`);
    input.value = String(current);
    root.dataset.page = String(current);
    root.dataset.visible = visible.join(',');
    tracker.show(visible);
    live?.show(visible);
    version.turned();
    const atStart = !view?.neighbour(current, -1);
    const atEnd = !view?.neighbour(current, 1);
    prevButton.setAttribute('aria-disabled', String(atStart));
    nextButton.setAttribute('aria-disabled', String(atEnd));
    if (announce) {
      const hash = `#page=${current}`;
      if (location.hash !== hash) history.replaceState(history.state, '', hash);
      announcer.textContent = label(visible);
    }
  };

  const go = (page: number, animate = true): void => {
    if (!view || !Number.isFinite(page)) return;
    const target = view.firstOf(Math.min(Math.max(1, Math.round(page)), total));
    const focusWasOnPage = stage.contains(document.activeElement);
    zoom.reset();
    const turned = view.show(target, animate && !reducedMotion());
    current = target;
    if (turned && animate && view.kind === 'paged') sound.play();
    changed(true);
    if (playing) arm();
    // A focused link on the old page is gone: keep focus in the book.
    if (focusWasOnPage && !stage.contains(document.activeElement)) stage.focus({ preventScroll: true });
  };

  const step = (delta: number): void => {
    const target = view?.neighbour(current, delta);
    if (target) go(target);
  };

  const layout = (): void => {
    const width = stage.clientWidth;
    const height = stage.clientHeight;
    if (!width || !height) return;
    zoom.reset();
    const small = matchMedia('(max-width: 640px), (max-height: 420px)').matches;
    let animation = forced && ANIMATIONS.includes(forced) ? forced : small ? data.manim : data.anim;
    if (!ANIMATIONS.includes(animation)) animation = 'flip';
    if (reducedMotion() && animation !== 'scroll_view') animation = 'cut';
    // Two pages side by side when that does not make them much smaller than one alone.
    const ratio = pages.ratio(1);
    const single = Math.min(height, width / ratio);
    const double = Math.min(height, width / (2 * ratio));
    const wide = animation !== 'scroll_view' && width >= 600 && total > 1;
    const spread = wide && (pageLayout === 'auto' ? double >= single * 0.8 : pageLayout === 'double');
    if (layoutButton) {
      layoutButton.hidden = !wide;
      layoutButton.setAttribute('aria-pressed', String(spread));
    }
    const key = `${animation}|${spread}`;
    if (key !== mode) {
      view?.destroy();
      stage.querySelector('.ssr')?.remove();
      view = animation === 'scroll_view'
        ? new ScrollView(stage, pages, (page) => {
            current = page;
            changed(false);
            scheduleAnnounce();
          })
        : new PagedView(layer, pages, { spread, animation, rtl });
      // A turn dragged to completion (gestures.ts): the page changes as with any other turn.
      if (view instanceof PagedView) {
        view.onTurn = (page) => {
          current = page;
          sound.play();
          changed(true);
          if (playing) arm();
        };
      }
      mode = key;
      root.dataset.mode = view.kind;
      root.dataset.spread = String(spread);
      root.dataset.animation = animation;
      for (const button of [zoomIn, zoomOut]) if (button) button.hidden = view.kind !== 'paged';
      view.layout(width, height);
      current = view.firstOf(current);
      view.show(current, false);
    } else {
      view!.layout(width, height);
    }
    changed(false);
    embedLayout();
  };

  let announceTimer = 0;
  const scheduleAnnounce = (): void => {
    clearTimeout(announceTimer);
    announceTimer = window.setTimeout(() => changed(true), 400);
  };

  // One page or two, on wide screens: the reader's choice holds until the page is reloaded.
  const layoutButton = byId('layout');
  layoutButton?.addEventListener('click', () => {
    pageLayout = root.dataset.spread === 'true' ? 'single' : 'double';
    layout();
  });

  current = pageFromHash() ?? 1;
  layout();
  new ResizeObserver(() => requestAnimationFrame(layout)).observe(stage);
  addEventListener('hashchange', () => {
    const page = pageFromHash();
    if (page && view && view.firstOf(page) !== current) go(page);
  });

  prevButton.addEventListener('click', () => (rtl ? step(1) : step(-1)));
  nextButton.addEventListener('click', () => (rtl ? step(-1) : step(1)));
  if (rtl) {
    prevButton.setAttribute('aria-label', 'Next page');
    nextButton.setAttribute('aria-label', 'Previous page');
  }
  byId<HTMLFormElement>('goto')!.addEventListener('submit', (event) => {
    event.preventDefault();
    const page = parseInt(input.value, 10);
    if (page >= 1) go(page);
    else input.value = String(current);
  });
  input.addEventListener('blur', () => (input.value = String(current)));
  // The page being typed is a jump target: its stand-in is fetched while the reader types.
  input.addEventListener('input', () => pages.prefetch(parseInt(input.value, 10)));

  zoomIn?.addEventListener('click', () => view?.kind === 'paged' && zoom.step(1));
  zoomOut?.addEventListener('click', () => zoom.step(-1));

  // Keyboard: arrows, Page Up/Down, Home, End, and + / − / 0 (with or without Ctrl/⌘) to zoom — not while typing or in a dialog.
  addEventListener('keydown', (event) => {
    const target = event.target as HTMLElement;
    if (event.defaultPrevented || event.altKey || target.closest('input, textarea, select, [contenteditable], dialog')) return;
    if (view?.kind === 'paged' && ['+', '=', '-', '0'].includes(event.key)) {
      if (event.key === '0') zoom.reset();
      else zoom.step(event.key === '-' ? -1 : 1);
      event.preventDefault();
      return;
    }
    if (event.ctrlKey || event.metaKey) return;
    const forward = rtl ? 'ArrowLeft' : 'ArrowRight';
    const backward = rtl ? 'ArrowRight' : 'ArrowLeft';
    switch (event.key) {
      case forward:
      case 'PageDown':
        step(1);
        break;
      case backward:
      case 'PageUp':
        step(-1);
        break;
      case 'Home':
        go(1);
        break;
      case 'End':
        go(total);
        break;
      default:
        return;
    }
    event.preventDefault();
  });

  // Swipes, taps on the book's outer quarters, double-tap and pinch zoom, panning (gestures.ts).
  setupGestures({
    stage,
    zoom,
    rtl,
    paged: () => view?.kind === 'paged',
    step: (delta) => step(delta),
    grab: (delta, x, y) => (view instanceof PagedView && !zoom.zoomed && !reducedMotion() ? view.grab(delta, x, y) : null),
  });

  // Sound: needs a user gesture to start; the button mutes it.
  const soundButton = byId('sound');
  const unlock = (): void => sound.unlock();
  // Capture phase: unlocked before the same key or tap turns the page, so the first turn is heard too.
  addEventListener('pointerdown', unlock, { once: true, capture: true });
  addEventListener('keydown', unlock, { once: true, capture: true });
  soundButton?.addEventListener('click', () => {
    sound.enabled = !sound.enabled;
    if (sound.enabled) sound.unlock();
    soundButton.setAttribute('aria-pressed', String(sound.enabled));
  });

  // Full screen (also inside an iframe that allows it).
  const fullscreenButton = byId('fullscreen');
  if (fullscreenButton) {
    if (!document.fullscreenEnabled) {
      fullscreenButton.hidden = true;
    } else {
      const enter = () => root.requestFullscreen().catch(() => undefined);
      fullscreenButton.addEventListener('click', () => {
        if (document.fullscreenElement) void document.exitFullscreen();
        else void enter();
      });
      document.addEventListener('fullscreenchange', () => {
        fullscreenButton.setAttribute('aria-pressed', String(Boolean(document.fullscreenElement)));
      });
      if (data.fsd) {
        // Browsers allow full screen only from a user gesture: try now, then on the first one.
        void enter();
        const onFirst = (event: Event): void => {
          removeEventListener('click', onFirst, true);
          removeEventListener('keydown', onFirst, true);
          if (!document.fullscreenElement && !(event.target as HTMLElement).closest?.('#fullscreen')) void enter();
        };
        addEventListener('click', onFirst, true);
        addEventListener('keydown', onFirst, true);
      }
    }
  }

  // The slideshow: a view every N seconds, from the book's settings, ?autoplay=N or the toolbar; it stops at
  // the end, and the reader can stop it at any time (WCAG 2.2.2). A turn by hand starts the interval again.
  const autoButton = byId('autoplay');
  const intervalSelect = byId<HTMLSelectElement>('autoplay-interval');
  const seconds = (): number => Math.max(2, Number(intervalSelect?.value) || 5);
  const arm = (): void => {
    clearTimeout(autoTimer);
    if (!playing) return;
    autoTimer = window.setTimeout(() => {
      const next = view?.neighbour(current, 1);
      if (next) go(next);
      else {
        play(false);
      }
    }, seconds() * 1000);
  };
  const play = (on: boolean): void => {
    playing = on;
    root.dataset.autoplay = on ? String(seconds()) : '';
    autoButton?.setAttribute('aria-pressed', String(on));
    autoButton?.setAttribute('aria-label', on ? 'Stop the slideshow' : 'Slideshow');
    arm();
  };
  autoButton?.addEventListener('click', () => play(!playing));
  intervalSelect?.addEventListener('change', () => play(playing));
  const autoStart = autoParam !== null ? Number(autoParam) : (data.auto ?? 0);
  if (autoStart >= 2 && intervalSelect) {
    if (![...intervalSelect.options].some((o) => o.value === String(autoStart))) intervalSelect.add(new Option(`${autoStart} s`, String(autoStart)));
    intervalSelect.value = String(autoStart);
    play(true);
  }

  setupPanels({
    data,
    go: (page) => go(page),
    current: () => current,
    setHits: (hits) => pages.setHits(hits),
  });
  setupLeadForm(data, tracker);
  root.dataset.ready = 'true';
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
