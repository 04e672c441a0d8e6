/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The reader's dialogs: table of contents, thumbnails, search, text view and
 * share. Their markup comes from the server; this wires them up (native
 * <dialog>: focus is trapped while open, Escape closes, focus returns to the
 * button that opened it).
 */
import type { HitRect, ReaderData, SearchHit, SearchResponse, TextResponse } from '../reader.types.ts';
import { byId, h } from './dom.ts';

export interface PanelHost {
  data: ReaderData;
  go(page: number): void;
  current(): number;
  setHits(hits: Map<number, HitRect[]>): void;
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as T;
}

export function setupPanels(host: PanelHost): void {
  const { data } = host;
  const openers = new Map<string, () => void>();

  for (const button of document.querySelectorAll<HTMLElement>('[data-open]')) {
    button.addEventListener('click', () => {
      const dialog = byId<HTMLDialogElement>(button.dataset.open!);
      if (!dialog || dialog.open) return;
      openers.get(dialog.id)?.();
      dialog.showModal();
    });
  }
  for (const dialog of document.querySelectorAll<HTMLDialogElement>('dialog.panel')) {
    dialog.addEventListener('click', (event) => {
      const target = event.target as HTMLElement;
      // A click on the backdrop, a close button, or a link to a page (the hash change turns to it).
      if (target === dialog || target.closest('[data-close]') || target.closest('a[href^="#page="]')) dialog.close();
    });
  }

  // Thumbnails, built the first time the grid opens.
  const grid = byId('thumbs');
  if (grid) {
    let built = false;
    openers.set('dlg-thumbs', () => {
      if (!built) {
        built = true;
        const items = data.pages.map((page, index) => {
          const n = index + 1;
          const item = h('li');
          const button = item.appendChild(h('button', '', { type: 'button', 'data-page': String(n) }));
          const small = page.i[0];
          const img = button.appendChild(h('img', '', { alt: '', loading: 'lazy', decoding: 'async' }));
          if (small) {
            img.width = small[0];
            img.height = small[1];
            img.src = data.img + small[2];
          }
          button.appendChild(h('span')).textContent = `Page ${n}`;
          return item;
        });
        grid.append(...items);
        grid.addEventListener('click', (event) => {
          const button = (event.target as HTMLElement).closest<HTMLElement>('button[data-page]');
          if (!button) return;
          byId<HTMLDialogElement>('dlg-thumbs')!.close();
          host.go(Number(button.dataset.page));
        });
      }
      const current = host.current();
      for (const button of grid.querySelectorAll<HTMLElement>('button[aria-current]')) button.removeAttribute('aria-current');
      const active = grid.querySelector<HTMLElement>(`button[data-page="${current}"]`);
      if (active) {
        active.setAttribute('aria-current', 'page');
        requestAnimationFrame(() => {
          active.focus();
          active.scrollIntoView({ block: 'center' });
        });
      }
    });
  }

  // Search: every matching page, hits listed 100 at a time ("Show more results"), and next/previous hit
  // buttons in the toolbar that go through all of them, loading highlights as they go.
  const form = byId<HTMLFormElement>('search-form');
  const results = byId('search-results');
  const status = byId('search-status');
  const moreResults = byId<HTMLButtonElement>('search-more');
  const hitPrev = byId<HTMLButtonElement>('hit-prev');
  const hitNext = byId<HTMLButtonElement>('hit-next');
  if (form && results && status && moreResults) {
    let latest = 0;
    let query = '';
    let pages: number[] = [];
    const loaded = new Map<number, SearchHit>();
    const windows = new Set<number>();

    const fetchWindow = async (offset: number, ticket: number): Promise<SearchResponse | null> => {
      windows.add(offset);
      const answer = await getJson<SearchResponse>(`${data.base}/search?q=${encodeURIComponent(query)}&offset=${offset}`);
      if (ticket !== latest) return null;
      pages = answer.pages;
      for (const hit of answer.hits) loaded.set(hit.page, hit);
      host.setHits(new Map([...loaded.values()].map((hit) => [hit.page, hit.rects])));
      return answer;
    };
    const list = (hits: SearchHit[]) => {
      for (const hit of hits) {
        const item = results.appendChild(h('li'));
        const button = item.appendChild(h('button', '', { type: 'button', 'data-page': String(hit.page) }));
        button.appendChild(h('span', 'rp')).textContent = `Page ${hit.page}`;
        const snip = button.appendChild(h('span', 'snip'));
        snip.append(hit.before, Object.assign(h('mark'), { textContent: hit.match }), hit.after);
      }
      const shown = results.children.length;
      moreResults.hidden = shown >= pages.length;
      moreResults.dataset.offset = String(shown);
    };
    const showHitButtons = () => {
      for (const button of [hitPrev, hitNext]) if (button) button.hidden = pages.length === 0;
    };

    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      query = byId<HTMLInputElement>('search-q')!.value.trim();
      results.replaceChildren();
      loaded.clear();
      windows.clear();
      pages = [];
      moreResults.hidden = true;
      showHitButtons();
      if (!query) {
        status.textContent = '';
        host.setHits(new Map());
        return;
      }
      const ticket = ++latest;
      status.textContent = 'Searching…';
      try {
        const answer = await fetchWindow(0, ticket);
        if (!answer) return;
        status.textContent =
          answer.total === 0 ? `No pages contain “${query}”.` : `${answer.total} page${answer.total === 1 ? '' : 's'} contain${answer.total === 1 ? 's' : ''} “${query}”.`;
        list(answer.hits);
        showHitButtons();
      } catch {
        if (ticket === latest) status.textContent = 'The search failed. Please try again.';
      }
    });
    moreResults.addEventListener('click', async () => {
      const ticket = latest;
      const offset = Number(moreResults.dataset.offset);
      moreResults.disabled = true;
      try {
        const answer = await fetchWindow(offset, ticket);
        if (answer) list(answer.hits);
      } finally {
        moreResults.disabled = false;
      }
    });
    results.addEventListener('click', (event) => {
      const button = (event.target as HTMLElement).closest<HTMLElement>('button[data-page]');
      if (!button) return;
      byId<HTMLDialogElement>('dlg-search')!.close();
      host.go(Number(button.dataset.page));
    });
    const jump = (direction: 1 | -1) => {
      const visible = (document.documentElement.dataset.visible ?? String(host.current())).split(',').map(Number);
      const target = direction > 0 ? pages.find((p) => p > Math.max(...visible)) : [...pages].reverse().find((p) => p < Math.min(...visible));
      if (target === undefined) {
        status.textContent = direction > 0 ? 'No more results after this page.' : 'No results before this page.';
        return;
      }
      const index = pages.indexOf(target);
      const offset = Math.floor(index / 100) * 100;
      if (!loaded.has(target) && !windows.has(offset)) void fetchWindow(offset, latest).catch(() => undefined);
      host.go(target);
      byId('announcer')!.textContent = `Result ${index + 1} of ${pages.length}, page ${target}`;
    };
    hitPrev?.addEventListener('click', () => jump(-1));
    hitNext?.addEventListener('click', () => jump(1));
  }

  // Text view: the page carries the first pages' text; more on demand.
  const more = byId<HTMLButtonElement>('text-more');
  const textView = byId('text-view');
  if (more && textView) {
    const load = async () => {
      const from = Number(more.dataset.from);
      if (!from || more.disabled) return;
      more.disabled = true;
      try {
        const answer = await getJson<TextResponse>(`${data.base}/text?from=${from}&to=${from + 49}${data.ver ? `&v=${data.ver}` : ''}`);
        for (const page of answer.pages) {
          const section = h('section', 'tp', { 'aria-labelledby': `tp-${page.page}` });
          const heading = section.appendChild(h('h3', '', { id: `tp-${page.page}` }));
          heading.appendChild(h('a', '', { href: `#page=${page.page}` })).textContent = `Page ${page.page}`;
          const paragraph = section.appendChild(h('p'));
          const lines = page.text.trim().split(/\r?\n/);
          lines.forEach((line, i) => paragraph.append(...(i > 0 ? [h('br'), line] : [line])));
          if (!page.text.trim()) paragraph.appendChild(h('i')).textContent = 'No text on this page.';
          textView.append(section);
        }
        const next = from + 50;
        if (next > data.pages.length || answer.pages.length === 0) more.parentElement!.remove();
        else more.dataset.from = String(next);
      } finally {
        more.disabled = false;
      }
    };
    more.addEventListener('click', () => void load());
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void load();
    }).observe(more);
  }

  // Share: copy the link (to the page being read).
  const copy = byId('copy-link');
  if (copy) {
    copy.addEventListener('click', async () => {
      const field = byId<HTMLInputElement>('share-url')!;
      const link = `${data.url}#page=${host.current()}`;
      field.value = link;
      const copyStatus = byId('copy-status')!;
      try {
        await navigator.clipboard.writeText(link);
        copyStatus.textContent = 'Link copied.';
      } catch {
        field.select();
        copyStatus.textContent = 'Press Ctrl+C (or ⌘C) to copy the selected link.';
      }
    });
  }
}
