/**
 * The publishing screens' figures: `npm run bench:publish [-- --runs N]`.
 *
 * Starts the service with its worker (embedded database; DATABASE_URL for
 * PostgreSQL) and Debian's Chromium, then prints:
 *
 *   - first screen interactive after sign-in: from opening the mailed sign-in
 *     link to the home screen's heading shown and the Books link enabled
 *     (median of N fresh browser contexts, default 3);
 *   - the largest route of the application (JS + CSS, gzip), as `npm run app:size`;
 *   - upload-to-ready of the corpus' GeoTopo PDF (117 pages, 1.8 MB): through
 *     the API (POST /v1/books, then GET /v1/batches/{id} every 200 ms until
 *     completed), and in the Upload screen (files chosen → "Upload" clicked →
 *     "Ready" shown), one after the other in the same run.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { appBundle, routeSizes } from '../src/modules/application/application.bundle.ts';
import { corpus } from '../test/documents.ts';
import { uploadFile, waitForBatch } from '../test/helpers.ts';
import { heading, launchWebBrowser, openApp, personIn, signInLink, startWebService } from '../test/web/web-browser.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(args.runs);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const svc = await startWebService({}, { worker: true });
const browser = await launchWebBrowser();
try {
  const { id: workspaceId, key } = await svc.workspace({ name: 'Bench Publishing' });
  const firstScreen: number[] = [];
  for (let run = 0; run < runs; run++) {
    const email = `bench${run}@example.com`;
    await personIn(svc, workspaceId, email, 'editor');
    const tab = await openApp(browser);
    await tab.page.goto(`${svc.origin}/app/sign-in`);
    await tab.page.getByLabel('E-mail address').fill(email);
    await tab.page.getByRole('button', { name: 'Send sign-in link' }).click();
    await tab.page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    const link = await signInLink(svc, email);
    const started = performance.now();
    await tab.page.goto(link);
    await heading(tab.page, 'Home');
    await tab.page.getByRole('link', { name: 'Books' }).waitFor({ state: 'visible' });
    firstScreen.push(performance.now() - started);
    if (run === runs - 1) {
      // The last context uploads through the screen.
      const geotopo = await readFile(corpus('GeoTopo-komprimiert.pdf'));
      const apiStart = performance.now();
      const accepted = await uploadFile(svc, key, geotopo, 'GeoTopo-komprimiert.pdf');
      const batch = await waitForBatch(svc, key, accepted.body.data.id, 600_000);
      const apiMs = performance.now() - apiStart;
      if (batch.status !== 'completed') throw new Error(`The API upload ended ${batch.status}`);

      await tab.page.getByRole('link', { name: 'Upload' }).click();
      await heading(tab.page, 'Upload');
      await tab.page.getByLabel('Choose documents').setInputFiles({ name: 'GeoTopo-komprimiert.pdf', mimeType: 'application/pdf', buffer: geotopo });
      const screenStart = performance.now();
      await tab.page.getByRole('button', { name: 'Upload', exact: true }).click();
      await tab.page.getByText(/^Ready/).first().waitFor({ timeout: 600_000 });
      const screenMs = performance.now() - screenStart;
      console.log(`GeoTopo (117 pp, 1.8 MB) upload-to-ready: API ${(apiMs / 1000).toFixed(1)} s, Upload screen ${(screenMs / 1000).toFixed(1)} s`);
    }
    await tab.close();
  }
  console.log(`first screen interactive after sign-in: median ${median(firstScreen).toFixed(0)} ms (${firstScreen.map((ms) => ms.toFixed(0)).join(', ')})`);
  const bundle = await appBundle();
  const sizes = [...bundle.lazy.keys()].map((route) => ({ route, gzip: routeSizes(bundle, route).gzip }));
  const largest = sizes.sort((a, b) => b.gzip - a.gzip)[0]!;
  console.log(`largest route: ${largest.route} ${(largest.gzip / 1024).toFixed(1)} KB gzip (entry, stylesheet and its chunks)`);
} finally {
  await browser.close();
  await svc.stop();
}
