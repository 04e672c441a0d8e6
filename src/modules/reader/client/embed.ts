/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * In an iframe: tells the embedding page how tall the frame should be for its
 * width (the toolbars plus the page, or the spread, at that width), with a
 * small message the embed snippet listens to (books.settings.ts embedCode),
 * and offers a button that opens the book on its own, full screen.
 */
import type { ReaderData } from '../reader.types.ts';
import { byId } from './dom.ts';

export const RESIZE_MESSAGE = 'flipbook:resize';

export function isEmbedded(): boolean {
  try {
    return window.top !== window.self;
  } catch {
    return true;
  }
}

/** Sets the embed up; returns what to call after each layout. */
export function setupEmbed(data: ReaderData, current: () => number): () => void {
  const root = document.documentElement;
  if (!isEmbedded()) return () => undefined;
  root.dataset.embedded = 'true';
  const open = byId<HTMLAnchorElement>('open-full');
  if (open) {
    open.hidden = false;
    open.addEventListener('click', () => (open.href = `${data.url}#page=${current()}`));
  }
  let sent = 0;
  return () => {
    const first = data.pages[0];
    const ratio = first ? first.w / first.h : 0.7071;
    const width = document.getElementById('stage')?.clientWidth ?? innerWidth;
    // Bars across the top and bottom add to the height; side rails (a short landscape frame) do not.
    const bars = [...document.querySelectorAll<HTMLElement>('.reader > .bar')].reduce((sum, bar) => sum + (bar.offsetWidth > bar.offsetHeight ? bar.offsetHeight : 0), 0);
    const pad = width < 600 ? 8 : 20;
    // By width alone (as a wide frame shows spreads), so the height sent never flips the layout back and forth.
    const spread = width >= 600 && data.pages.length > 1;
    const height = Math.ceil(bars + (width - 2 * pad) / (spread ? 2 * ratio : ratio) + 2 * pad);
    if (height === sent) return;
    sent = height;
    // Only a height: nothing private, so any embedding page may read it.
    parent.postMessage({ type: RESIZE_MESSAGE, id: data.id, height }, '*');
  };
}
