/**
 * npm run bench:charts — the views-over-time chart: the application's HTML
 * bars (the markup of src/web/analytics/widgets.tsx with app.css) against
 * uPlot (canvas), both drawing BENCH_POINTS daily points (default 365) in
 * Chromium, BENCH_ITERATIONS times each (default 30): the time from building
 * the chart to the frame after it is laid out and painted. Prints p50 and
 * the worst, and each one's weight in the application (gzip -9 of the code it
 * adds). uPlot is not a dependency of the project: point BENCH_UPLOT_DIR at an
 * installed copy (`npm install uplot` in a scratch folder) to measure it too.
 * The decision and its figures: docs/analytics-screens.md, "Decisions".
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchBrowser } from '../test/reader/browser.ts';

const POINTS = Number(process.env.BENCH_POINTS ?? 365);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 30);
const UPLOT = process.env.BENCH_UPLOT_DIR ? path.join(process.env.BENCH_UPLOT_DIR, 'node_modules/uplot/dist') : null;
const say = (line: string) => process.stdout.write(`${line}\n`);
const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, worst ${sorted.at(-1)!.toFixed(1)} ms`;
};

say(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
const css = readFileSync(path.join(import.meta.dirname, '../src/web/app.css'), 'utf8');
const values = Array.from({ length: POINTS }, (_, i) => Math.round(500 + 400 * Math.sin(i / 9) + ((i * 7919) % 300)));
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.setContent(`<!doctype html><html><head><style>${css}</style></head><body><main><section class="card" id="chart"></section></main></body></html>`);
  // The HTML bars: one element per point, as ViewsOverTime renders them.
  const html: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    html.push(await page.evaluate((vs) => new Promise<number>((resolve) => {
      const host = document.getElementById('chart')!;
      host.textContent = '';
      const t = performance.now();
      const max = Math.max(1, ...vs);
      const bars = document.createElement('div');
      bars.className = 'analytics-bars';
      bars.setAttribute('aria-hidden', 'true');
      vs.forEach((v, j) => {
        const bar = document.createElement('div');
        bar.className = j === vs.length - 1 ? 'analytics-bar analytics-bar-today' : 'analytics-bar';
        bar.title = `day ${j}: ${v} views`;
        const span = document.createElement('span');
        span.style.height = `${(v / max) * 100}%`;
        bar.append(span);
        bars.append(bar);
      });
      host.append(bars);
      void host.offsetHeight;
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t)));
    }), values));
  }
  const widgetsSource = readFileSync(path.join(import.meta.dirname, '../src/web/analytics/widgets.tsx'), 'utf8');
  const bars = widgetsSource.slice(widgetsSource.indexOf('export function ViewsOverTime'), widgetsSource.indexOf('/** A top list'));
  say(`HTML bars, ${POINTS} points: ${stats(html)}; weight: the component, about ${(gzipSync(bars, { level: 9 }).length / 1024).toFixed(1)} KB gzip of source (already in the book's route)`);

  if (UPLOT && existsSync(path.join(UPLOT, 'uPlot.iife.min.js'))) {
    const js = readFileSync(path.join(UPLOT, 'uPlot.iife.min.js'));
    const uCss = readFileSync(path.join(UPLOT, 'uPlot.min.css'));
    await page.addScriptTag({ content: js.toString('utf8') });
    await page.addStyleTag({ content: uCss.toString('utf8') });
    const canvas: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      canvas.push(await page.evaluate((vs) => new Promise<number>((resolve) => {
        const host = document.getElementById('chart')!;
        host.textContent = '';
        const t = performance.now();
        const day = 86_400;
        const xs = vs.map((_, j) => 1_767_225_600 + j * day);
        const U = (window as unknown as { uPlot: new (opts: unknown, data: unknown, el: HTMLElement) => unknown }).uPlot;
        const paths = (U as unknown as { paths: { bars: (o: unknown) => unknown } }).paths.bars({ size: [0.8, 20] });
        new U({ width: host.clientWidth - 40, height: 160, legend: { show: false }, series: [{}, { label: 'Views', fill: '#1f4fd1', stroke: '#1f4fd1', paths }] }, [xs, vs], host);
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t)));
      }), values));
    }
    say(`uPlot ${JSON.parse(readFileSync(path.join(UPLOT, '../package.json'), 'utf8')).version} bars, ${POINTS} points: ${stats(canvas)}; weight: ${(gzipSync(js, { level: 9 }).length / 1024).toFixed(1)} KB gzip of JavaScript and ${(gzipSync(uCss, { level: 9 }).length / 1024).toFixed(1)} KB of CSS added to the route`);
  } else {
    say('uPlot: not measured (set BENCH_UPLOT_DIR to a folder where `npm install uplot` was run)');
  }
} finally {
  await browser.close();
}
