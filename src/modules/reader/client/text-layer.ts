/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The page's selectable text layer, as pdf.js makes it: the text runs
 * extracted at conversion (GET <base>/text-layer?page=N), laid over the image
 * as transparent text at their positions, each run stretched to its width.
 * Readers select and copy it, find-in-page finds it, screen readers read it
 * on the page itself. Sizes are in container units of the page (.page is a
 * size container), so a resize or a zoom needs no re-measuring.
 */
import type { ReaderData, TextLayerResponse } from '../reader.types.ts';
import { h } from './dom.ts';

export class TextLayer {
  private readonly data: ReaderData;
  private readonly loads = new Map<number, Promise<TextLayerResponse | null>>();

  constructor(data: ReaderData) {
    this.data = data;
  }

  private load(n: number): Promise<TextLayerResponse | null> {
    let load = this.loads.get(n);
    if (!load) {
      load = fetch(`${this.data.base}/text-layer?page=${n}${this.data.ver ? `&v=${this.data.ver}` : ''}`, { headers: { accept: 'application/json' } })
        .then((response) => (response.ok ? (response.json() as Promise<TextLayerResponse>) : null))
        .catch(() => null);
      // A failed load is tried again next time the page shows.
      void load.then((answer) => answer ?? this.loads.delete(n));
      this.loads.set(n, load);
      if (this.loads.size > 40) this.loads.delete(this.loads.keys().next().value!);
    }
    return load;
  }

  /** Adds page n's text layer to its element, once (when it is on screen). */
  attach(el: HTMLElement, n: number): void {
    if (el.dataset.text === 'unfitted') this.fit(el);
    if (el.dataset.text) return;
    el.dataset.text = 'loading';
    void this.load(n).then((answer) => {
      if (!answer || answer.items.length === 0) return;
      const layer = h('div', 'textlayer');
      for (const [x, y, w, hgt, text] of answer.items) {
        const run = layer.appendChild(h('span'));
        run.textContent = text;
        run.style.left = `${x * 100}%`;
        run.style.top = `${y * 100}%`;
        run.style.fontSize = `${hgt * 100}cqh`;
        run.dataset.w = String(w);
      }
      const links = el.querySelector('.links');
      if (links) links.before(layer);
      else el.append(layer);
      this.fit(el);
    });
  }

  /** Stretches each run to its width on the page (measured once; container units keep it right at any size). */
  private fit(el: HTMLElement): void {
    const width = el.clientWidth;
    el.dataset.text = width ? 'ready' : 'unfitted';
    if (!width) return;
    for (const run of el.querySelectorAll<HTMLElement>('.textlayer span')) {
      const natural = run.offsetWidth;
      if (natural > 0) run.style.transform = `scaleX(${(Number(run.dataset.w) * width) / natural})`;
    }
  }
}
