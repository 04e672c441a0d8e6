/**
 * Browser harness for the reader tests and benchmark: Debian's Chromium
 * driven by playwright-core, and helpers to publish a book through the API.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type CDPSession, type Page } from 'playwright-core';
import { uploadFile, waitForBatch, type TestService } from '../helpers.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_SKIP = existsSync(CHROMIUM_PATH) ? false : `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium)`;
/**
 * The browser suites run once in CI, in its PostgreSQL pass: what they drive is the reader and the screens, and the
 * API and database behaviour under them has its own tests on both databases. Locally they run on either.
 */
export const BROWSER_SKIP: string | false = CHROMIUM_SKIP
  || (process.env.CI && !process.env.DATABASE_URL ? 'the browser tests run in CI\'s PostgreSQL pass' : false);
export const ARTIFACTS = path.resolve(import.meta.dirname, '../../artifacts/reader');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** `extraArgs`: more Chromium switches, e.g. --host-resolver-rules to serve test host names from 127.0.0.1. */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage', ...extraArgs],
  });
}

export interface ReaderTab {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[];
  close(): Promise<void>;
}

export async function openTab(browser: Browser, options: BrowserContextOptions = {}): Promise<ReaderTab> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  return { context, page, problems, close: () => context.close() };
}

/** Opens a reader URL and waits for the browser code to take over and the first page image to show. */
export async function openReader(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await waitForReader(page);
}

export async function waitForReader(page: Page): Promise<void> {
  await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  await page.waitForFunction(() =>
    [...document.querySelectorAll<HTMLImageElement>('#stage .page img')].some((img) => img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0),
  );
}

/** The pages on screen, as the reader reports them ("2,3"). */
export async function visiblePages(page: Page): Promise<string> {
  return page.evaluate(() => document.documentElement.dataset.visible ?? '');
}

/** Waits until the reader shows exactly `expected` ("4,5") and its images are loaded. */
export async function waitForPages(page: Page, expected: string): Promise<void> {
  await page.waitForFunction((want) => document.documentElement.dataset.visible === want, expected, { timeout: 10_000 });
  await page.waitForFunction((want) => {
    const numbers = want.split(',');
    return numbers.every((n) => {
      const img = document.querySelector<HTMLImageElement>(`#stage .page[data-page="${n}"] img`);
      return img && img.complete && img.naturalWidth > 0 && img.getBoundingClientRect().width > 0;
    });
  }, expected, { timeout: 10_000 });
  // And the page turn has finished.
  await page.waitForFunction(() => document.getAnimations().length === 0 && !document.querySelector('#stage .leaf'), undefined, { timeout: 10_000 });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

let axeSource: string | null = null;

/**
 * Runs axe-core in the page (evaluated, so the page's CSP does not stand in the way) and returns its violations.
 * `rules`: rules to turn on beyond axe's defaults, e.g. ['target-size'] (WCAG 2.2's 2.5.8, off by default).
 */
export async function axeViolations(page: Page, rules: string[] = []): Promise<AxeViolation[]> {
  axeSource ??= await readFile(path.resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  return page.evaluate(async (extra) => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'], rules: Object.fromEntries(extra.map((id) => [id, { enabled: true }])) });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  }, rules);
}

export function seriousOrWorse(violations: AxeViolation[]): AxeViolation[] {
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Uploads a document, waits for its conversion and publishes it with the given settings. */
export async function publishBook(
  svc: TestService, key: string, file: Buffer, filename: string, settings: Record<string, unknown> = {}, conversionTimeoutMs = 120_000,
): Promise<{ randomId: string; url: string; book: any }> {
  const upload = await uploadFile(svc, key, file, filename);
  if (upload.status !== 202) throw new Error(`upload failed: ${upload.text}`);
  const batch = await waitForBatch(svc, key, upload.body.data.batch_id, conversionTimeoutMs);
  if (batch.status !== 'completed') throw new Error(`conversion failed: ${JSON.stringify(batch.error)}`);
  const randomId = batch.books[0].random_id as string;
  const book = await updateBook(svc, key, randomId, settings);
  return { randomId, url: book.preview_url, book };
}

export async function updateBook(svc: TestService, key: string, randomId: string, settings: Record<string, unknown>): Promise<any> {
  const res = await svc.request('PUT', `/v1/books/${randomId}`, { key, body: { status: 'publish', ...settings } });
  if (res.status !== 200) throw new Error(`publishing failed: ${res.text}`);
  return res.body.data;
}

/** A phone at DPR 3 with touch (the throttled profiles of issues 16 and 31). */
export const PHONE_3X = { viewport: PHONE, deviceScaleFactor: 3, isMobile: true, hasTouch: true };

/** Emulates a network of `downKbit` kbit/s (up and down) and `latency` ms through CDP. */
export async function throttle(cdp: CDPSession, downKbit: number, latency: number): Promise<void> {
  await cdp.send('Network.enable');
  const bytes = (downKbit * 1024) / 8;
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency, downloadThroughput: bytes, uploadThroughput: bytes });
}

export interface SkimResult {
  /** Turns where, 80 ms after the turn, a page it asked for had no image on screen, or any frame showed a page without one. */
  white: number;
  /** Turns whose pages showed a sharp rendition (wider than 400 px) before the next turn, and how long that took. */
  sharpBefore: number;
  sharpMs: number[];
  /** ms from the last turn until its pages were sharp (the reader stopped there). */
  lastSharpMs: number;
}

/**
 * Skims as a reader does: a turn (the next button) every `everyMs` ms, `turns` times, all timed in the page.
 * A turn is white when 80 ms after it a page it asked for is not on screen with an image drawn (a blank page,
 * or the previous view still there because the new one has nothing to show), or when any frame in the turn
 * shows a page without an image.
 */
export async function skim(page: Page, turns: number, everyMs = 300): Promise<SkimResult> {
  return page.evaluate(([count, every]) => new Promise<SkimResult>((resolve) => {
    const root = document.documentElement;
    const drawn = (n: string) => {
      const el = document.querySelector<HTMLElement>(`#stage .page[data-page="${n}"]:not(.blank)`);
      return Boolean(el?.isConnected && el.getBoundingClientRect().width > 0 && [...el.querySelectorAll('img')].some((img) => img.complete && img.naturalWidth > 1));
    };
    const sharpOn = (n: string) => [...document.querySelectorAll<HTMLImageElement>(`#stage .page[data-page="${n}"] img.hi.ready`)].some((img) => img.naturalWidth > 400);
    let frameWhite = false;
    let done = false;
    const frame = () => {
      for (const el of document.querySelectorAll<HTMLElement>('#stage .page:not(.blank)')) {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || box.bottom < 0 || box.top > innerHeight) continue;
        if (![...el.querySelectorAll('img')].some((img) => img.complete && img.naturalWidth > 1)) frameWhite = true;
      }
      if (!done) requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    let white = 0;
    let sharpBefore = 0;
    const sharpMs: number[] = [];
    let turn = 0;
    const next = () => {
      turn++;
      frameWhite = false;
      const t0 = performance.now();
      document.getElementById('next')!.click();
      const asked = (root.dataset.visible ?? '').split(',').filter(Boolean);
      let got = false;
      const poll = () => {
        if (!got && asked.every(sharpOn)) {
          got = true;
          sharpMs.push(performance.now() - t0);
        }
        if (performance.now() - t0 < every - 5) requestAnimationFrame(poll);
      };
      requestAnimationFrame(poll);
      setTimeout(() => {
        if (!asked.every(drawn) || frameWhite) white++;
      }, 80);
      setTimeout(() => {
        if (got) sharpBefore++;
        if (turn < count) return next();
        const last = () => {
          if (asked.every(sharpOn) || performance.now() - t0 > 30_000) {
            done = true;
            resolve({ white, sharpBefore, sharpMs, lastSharpMs: performance.now() - t0 });
          } else requestAnimationFrame(last);
        };
        last();
      }, every);
    };
    next();
  }), [turns, everyMs] as const);
}

/**
 * What the reader holds: DOM nodes and JS heap after a forced GC, and the pixels of every image element
 * alive (detached ones too, found with Runtime.queryObjects) at 4 bytes a pixel, their decoded size.
 * `cdp` must have Performance enabled.
 */
export async function memorySample(cdp: CDPSession): Promise<{ nodes: number; heap: number; imageBytes: number; images: number }> {
  await cdp.send('HeapProfiler.collectGarbage');
  const usage = await cdp.send('Runtime.getHeapUsage');
  const metrics = await cdp.send('Performance.getMetrics');
  const nodes = metrics.metrics.find((m) => m.name === 'Nodes')?.value ?? 0;
  const proto = await cdp.send('Runtime.evaluate', { expression: 'HTMLImageElement.prototype' });
  const all = await cdp.send('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId! });
  const sum = await cdp.send('Runtime.callFunctionOn', {
    objectId: all.objects.objectId!,
    functionDeclaration: 'function () { let bytes = 0; let count = 0; for (const img of this) if (img.complete && img.naturalWidth > 1) { bytes += img.naturalWidth * img.naturalHeight * 4; count++; } return [bytes, count]; }',
    returnByValue: true,
  });
  await cdp.send('Runtime.releaseObject', { objectId: all.objects.objectId! });
  await cdp.send('Runtime.releaseObject', { objectId: proto.result.objectId! });
  const [imageBytes, images] = sum.result.value as [number, number];
  return { nodes, heap: usage.usedSize, imageBytes, images };
}

/**
 * Waits until the reader has stayed on its view: every page shown has its sharp image decoded and none other
 * on its way (asked for once the reader stops turning), and the reader's loading queue is empty (`data-fetching`:
 * the stand-ins around and the next view's sharp images have arrived).
 */
export async function waitForSharp(page: Page, timeoutMs = 60_000): Promise<void> {
  await page.waitForFunction(() => {
    const root = document.documentElement;
    const visible = (root.dataset.visible ?? '').split(',').filter(Boolean);
    const sharp = (n: string) => {
      const his = [...document.querySelectorAll<HTMLImageElement>(`#stage .page[data-page="${n}"] img.hi`)];
      return his.length === 1 && his[0]!.classList.contains('ready') && his[0]!.naturalWidth > 0;
    };
    return visible.length > 0 && visible.every(sharp) && root.dataset.fetching === '0';
  }, undefined, { timeout: timeoutMs });
}

/** Counts the page's image requests in flight; `idle()` resolves once none is (what the reader prefetches has arrived). */
export function imageRequests(page: Page): { idle(timeoutMs?: number): Promise<void> } {
  const inFlight = new Set<unknown>();
  let wake: (() => void) | null = null;
  const end = (request: unknown) => {
    inFlight.delete(request);
    if (inFlight.size === 0) wake?.();
  };
  page.on('request', (request) => request.resourceType() === 'image' && !request.url().startsWith('data:') && inFlight.add(request));
  page.on('requestfinished', end);
  page.on('requestfailed', end);
  return {
    async idle(timeoutMs = 30_000) {
      if (inFlight.size === 0) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${inFlight.size} image requests still in flight`)), timeoutMs);
        wake = () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        };
      });
    },
  };
}
