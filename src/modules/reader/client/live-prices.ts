/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Live prices and stock over a catalog book's pages: for the pages shown, ask
 * the service which products differ from their printed page (GET
 * /read/{id}/items?pages=…) and overlay just those: the current price, or an
 * "Out of stock" veil. The page image is never re-rendered. Overlays ignore
 * the pointer, so the product links underneath still click through. Styles
 * are set through the CSSOM (allowed by the reader's CSP), keeping this file
 * self-contained.
 */
import type { ReaderData } from '../reader.types.ts';

interface LiveItem {
  page: number;
  key: string;
  x: number;
  y: number;
  width: number;
  height: number;
  price: string | null;
  out_of_stock: boolean;
}

const REFRESH_MS = 60_000;

function overlay(item: LiveItem): HTMLElement {
  const box = document.createElement('div');
  box.className = 'live-item';
  box.dataset.key = item.key;
  Object.assign(box.style, {
    position: 'absolute', left: `${item.x * 100}%`, top: `${item.y * 100}%`, width: `${item.width * 100}%`, height: `${item.height * 100}%`,
    pointerEvents: 'none', display: 'flex', flexDirection: 'column', alignItems: 'flex-end', justifyContent: 'flex-start', gap: '2px',
    background: item.out_of_stock ? 'rgba(255,255,255,.55)' : 'transparent', font: '600 max(9px, 2.2cqw)/1.2 system-ui, sans-serif',
  });
  const badge = (text: string, colour: string) => {
    const el = document.createElement('span');
    el.textContent = text;
    Object.assign(el.style, { background: colour, color: '#fff', padding: '2px 6px', borderRadius: '3px', margin: '4px 4px 0 0', boxShadow: '0 1px 3px rgba(0,0,0,.3)' });
    box.append(el);
  };
  if (item.out_of_stock) badge('Out of stock', '#b3261e');
  if (item.price) badge(`Now ${item.price}`, '#0b57d0');
  return box;
}

export function startLivePrices(data: ReaderData): { show(visible: number[]): void } {
  const known = new Map<number, { at: number; items: LiveItem[] }>();
  let timer = 0;

  const apply = () => {
    for (const el of document.querySelectorAll<HTMLElement>('.page[data-page]')) {
      const entry = known.get(Number(el.dataset.page));
      if (!entry) continue;
      const stamp = String(entry.at);
      if (el.dataset.live === stamp) continue;
      el.dataset.live = stamp;
      for (const old of el.querySelectorAll('.live-item')) old.remove();
      for (const item of entry.items) el.append(overlay(item));
    }
  };

  const load = async (pages: number[]) => {
    const now = Date.now();
    const wanted = pages.filter((p) => (known.get(p)?.at ?? 0) < now - REFRESH_MS);
    if (wanted.length) {
      try {
        const response = await fetch(`${data.base}/items?pages=${wanted.join(',')}`, { credentials: 'same-origin' });
        if (response.ok) {
          const body = (await response.json()) as { items: LiveItem[] };
          for (const page of wanted) known.set(page, { at: now, items: body.items.filter((i) => i.page === page) });
        }
      } catch {
        // Offline or refused: the printed prices stay.
      }
    }
    apply();
  };

  // A page element built after the answer came (a turn, a re-layout, a page let go and built again) gets its
  // overlays too: apply() skips pages already marked, so its own additions end the round.
  let queued = false;
  new MutationObserver(() => {
    if (queued || known.size === 0) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      apply();
    });
  }).observe(document.body, { childList: true, subtree: true });

  return {
    show(visible: number[]) {
      window.clearTimeout(timer);
      // Pages next to the shown ones too, so a turn shows them already marked.
      const pages = [...new Set(visible.flatMap((p) => [p - 1, p, p + 1]))].filter((p) => p >= 1 && p <= data.pages.length).slice(0, 10);
      timer = window.setTimeout(() => void load(pages), 150);
    },
  };
}
