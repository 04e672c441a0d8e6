/**
 * The application's figures for issue 26's closing note: `npm run bench:app [-- --runs N]`
 * (`bench:publish` is the same script).
 *
 * Starts the service with its worker (embedded database; DATABASE_URL for
 * PostgreSQL), a workspace of 30 books and Debian's Chromium, then prints each
 * figure beside a reference measured in the same run:
 *
 *   - first screen interactive after sign-in: from opening the mailed sign-in
 *     link (which submits it) to the Books screen's first control usable (its
 *     "Search by name" box enabled and the first book shown), in a fresh
 *     browser context (cold cache) each run; reference: the same screen opened
 *     by a person already signed in, in another fresh context (cold cache,
 *     the session cookie given), so the difference is what signing in costs;
 *   - the largest route's JavaScript (entry, its static chunks and the route's
 *     own chunks, gzip, as `npm run app:size` counts them), beside the entry
 *     alone and the issue's 60 KB goal;
 *   - upload-to-ready of the corpus' GeoTopo PDF (117 pages, 1.8 MB) in the
 *     Upload screen (file chosen → "Upload" clicked → "Ready" shown), beside
 *     the same upload through the API (POST /v1/books, then GET
 *     /v1/batches/{id} until completed) just before it in the same service.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { Page } from 'playwright-core';
import { appBundle, type AppBundle } from '../src/modules/application/application.bundle.ts';
import { corpus } from '../test/documents.ts';
import { insertBook } from '../test/factories.ts';
import { uploadFile, waitForBatch } from '../test/helpers.ts';
import { DESKTOP, heading, launchWebBrowser, openApp, personIn, signInLink, startWebService } from '../test/web/web-browser.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(args.runs);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const list = (values: number[]) => values.map((ms) => ms.toFixed(0)).join(', ');
const BOOKS = 30;

/** The Books screen is usable: its heading, the search box enabled, and the first book (by name, newest first) shown. */
async function booksUsable(page: Page): Promise<void> {
  // A long wait: on a loaded machine the first screen may take longer than the tests' 15 s.
  await page.getByRole('heading', { level: 1, name: 'Books' }).waitFor({ timeout: 120_000 });
  const search = page.getByLabel('Search by name');
  await search.waitFor({ state: 'visible' });
  await page.waitForFunction(() => !(document.querySelector<HTMLInputElement>('input[type="text"]')?.disabled ?? true));
  await page.getByText(`Book ${String(BOOKS).padStart(2, '0')}`, { exact: true }).first().waitFor();
}

/** JavaScript of a route, gzip: the entry, its static chunks and the route's own chunks (the stylesheet left out). */
function routeJs(bundle: AppBundle, module: string | null): number {
  const assets = [bundle.entry, ...bundle.preload, ...(module ? bundle.lazy.get(module) ?? [] : [])].filter((a) => a.name.endsWith('.js'));
  return assets.reduce((total, a) => total + a.gzip.length, 0);
}

const svc = await startWebService({}, { worker: true });
const browser = await launchWebBrowser();
try {
  const { id: workspaceId, key } = await svc.workspace({ name: 'Bench Publishing' });
  for (let i = 1; i <= BOOKS; i++) {
    await insertBook(svc, workspaceId, { name: `Book ${String(i).padStart(2, '0')}`, status: 'publish', publishedDate: new Date(), updatedAt: new Date(Date.now() + i * 1000) });
  }
  const signIn: number[] = [];
  const signedIn: number[] = [];
  for (let run = 0; run < runs; run++) {
    const email = `bench${run}@example.com`;
    await personIn(svc, workspaceId, email, 'editor');
    const tab = await openApp(browser);
    await tab.page.goto(`${svc.origin}/app/sign-in?next=/app/books`);
    await tab.page.getByLabel('E-mail address').fill(email);
    await tab.page.getByRole('button', { name: 'Send sign-in link' }).click();
    await tab.page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    const link = await signInLink(svc, email);
    // A fresh context for the link, as a person opening it from their mail: nothing cached.
    const state = await tab.context.storageState();
    await tab.close();
    const fresh = await browser.newContext({ viewport: DESKTOP, storageState: state });
    const page = await fresh.newPage();
    let started = performance.now();
    await page.goto(link);
    await booksUsable(page);
    signIn.push(performance.now() - started);

    // Reference: the same screen for a person already signed in, cold cache.
    const again = await browser.newContext({ viewport: DESKTOP, storageState: await fresh.storageState() });
    const reference = await again.newPage();
    started = performance.now();
    await reference.goto(`${svc.origin}/app/books`);
    await booksUsable(reference);
    signedIn.push(performance.now() - started);
    await again.close();
    await fresh.close();
  }
  console.log(`first screen interactive after sign-in (link opened → Books usable): median ${median(signIn).toFixed(0)} ms (${list(signIn)}); ` +
    `reference, the Books screen opened already signed in: median ${median(signedIn).toFixed(0)} ms (${list(signedIn)})`);

  const bundle = await appBundle();
  const sizes = [...bundle.lazy.keys()].map((route) => ({ route, js: routeJs(bundle, route) })).sort((a, b) => b.js - a.js);
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`largest route's JavaScript: ${sizes[0]!.route} ${kb(sizes[0]!.js)} gzip; next ${sizes.slice(1, 4).map((s) => `${s.route} ${kb(s.js)}`).join(', ')}; ` +
    `reference: the entry alone ${kb(routeJs(bundle, null))}, the goal 60.0 KB`);

  const geotopo = await readFile(corpus('GeoTopo-komprimiert.pdf'));
  const apiStart = performance.now();
  const accepted = await uploadFile(svc, key, geotopo, 'GeoTopo-komprimiert.pdf');
  const batch = await waitForBatch(svc, key, accepted.body.data.id, 900_000);
  const apiMs = performance.now() - apiStart;
  if (batch.status !== 'completed') throw new Error(`The API upload ended ${batch.status}`);

  await personIn(svc, workspaceId, 'uploader@example.com', 'editor');
  const tab = await openApp(browser);
  await tab.page.goto(`${svc.origin}/app/sign-in?next=/app/upload`);
  await tab.page.getByLabel('E-mail address').fill('uploader@example.com');
  await tab.page.getByRole('button', { name: 'Send sign-in link' }).click();
  await tab.page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  await tab.page.goto(await signInLink(svc, 'uploader@example.com'));
  await heading(tab.page, 'Upload');
  await tab.page.getByLabel('Choose documents').setInputFiles({ name: 'GeoTopo-komprimiert.pdf', mimeType: 'application/pdf', buffer: geotopo });
  const screenStart = performance.now();
  await tab.page.getByRole('button', { name: 'Upload', exact: true }).click();
  await tab.page.getByText(/^Ready/).first().waitFor({ timeout: 900_000 });
  const screenMs = performance.now() - screenStart;
  await tab.close();
  console.log(`GeoTopo (117 pp, 1.8 MB) upload-to-ready: Upload screen ${(screenMs / 1000).toFixed(1)} s; reference, the same upload through the API just before: ${(apiMs / 1000).toFixed(1)} s`);
} finally {
  await browser.close();
  await svc.stop();
}
