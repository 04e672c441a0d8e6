/**
 * Browser harness for the reader tests and benchmark: Debian's Chromium
 * driven by playwright-core, and helpers to publish a book through the API.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { uploadFile, waitForBatch, type TestService } from '../helpers.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_SKIP = existsSync(CHROMIUM_PATH) ? false : `Chromium is not installed at ${CHROMIUM_PATH} (apt-get install -y chromium)`;
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
