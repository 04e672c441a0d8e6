/// <reference lib="dom" />
/**
 * A new version of the book (docs/book-versions.md): the reader asks which
 * version is current when it turns a page (at most every 5 s) and every 30 s
 * while visible. When the book has moved on, it says so and reopens the book
 * at the same page number, or at the last page when the new version is
 * shorter; the reopened reader says the document was updated.
 */
import type { ReaderData } from '../reader.types.ts';
import { h } from './dom.ts';

const CHECK_ON_TURN_MS = 5_000;
const CHECK_EVERY_MS = 30_000;
/** Long enough to read the notice before the book reopens. */
const NOTICE_MS = 1_500;

export function watchVersion(data: ReaderData, currentPage: () => number): { turned(): void } {
  const notice = document.body.appendChild(h('p', 'version-notice', { role: 'status', 'aria-live': 'polite' }));
  notice.hidden = true;
  const updated = /(?:^#|&)updated=(\d+)/.exec(location.hash);
  if (updated) {
    notice.textContent = `This document was updated (version ${updated[1]}).`;
    notice.hidden = false;
    // The hash keeps only the page: a reload should not announce the update again.
    setTimeout(() => history.replaceState(history.state, '', location.hash.replace(/&updated=\d+/, '')), NOTICE_MS);
  }
  if (!data.ver || data.preview) return { turned() {} };
  let last = Date.now();
  let moving = false;
  const check = async (): Promise<void> => {
    if (moving) return;
    last = Date.now();
    try {
      const response = await fetch(`${data.base}/version`, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const now = (await response.json()) as { version: number; page_count: number };
      if (now.version === data.ver || now.page_count < 1) return;
      moving = true;
      const page = Math.min(currentPage(), now.page_count);
      notice.textContent = `A new version of this document is available. Opening it at page ${page}…`;
      notice.hidden = false;
      setTimeout(() => {
        history.replaceState(history.state, '', `#page=${page}&updated=${now.version}`);
        location.reload();
      }, NOTICE_MS);
    } catch {
      // Offline for a moment: the next check tries again.
    }
  };
  setInterval(() => {
    if (document.visibilityState === 'visible') void check();
  }, CHECK_EVERY_MS);
  return {
    turned() {
      if (Date.now() - last >= CHECK_ON_TURN_MS) void check();
    },
  };
}
