/**
 * Catalogs in Chromium: an admin is refused in words without a name, creates
 * a catalog from a product feed served on 127.0.0.1 (admitted through
 * OUTBOUND_ALLOWED_HOSTS), sees its import go to ready and its items, and a
 * feed that cannot be fetched shown failed with the reason; the import's
 * sync job with its progress and the item it refused, and the failed one's
 * reason; a catalog deleted after a confirmation. An editor sees
 * the catalogs without a create form. The admin searches the items (on the API),
 * is told in words when the search leaves nothing to make a book from, then
 * chooses a template by its thumbnail from the keyboard and makes a book of
 * the items found, followed to ready with a link to it. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

const FEED = [
  { external_item_key: 'tee-s', title: 'Organic tee S', price: '19.90', currency: 'EUR' },
  { external_item_key: 'tee-m', title: 'Organic tee M', price: '19.90', currency: 'EUR' },
  { external_item_key: 'cap', title: 'Cap', price: '9.50', currency: 'EUR' },
  // Refused by the import: a price with a decimal comma.
  { external_item_key: 'scarf', title: 'Scarf', price: '12,50', currency: 'EUR' },
];

describe('catalogs in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Shop', plan: 'company' }, env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, worker: true });
  let feeds: http.Server;
  let base: string;

  before(async () => {
    feeds = http.createServer((req, res) => {
      if (req.url === '/products.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(FEED));
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
      }
    });
    await new Promise<void>((resolve) => feeds.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(feeds.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => feeds?.close(resolve));
  });

  it('creates a catalog from a feed and follows the import to its items', async () => {
    await suite.signedIn('admin@example.com', 'admin', async (tab) => {
      const { page } = tab;
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Catalogs' }).click();
      await heading(page, 'Catalogs');
      await page.getByText('This workspace has no catalogs yet.').waitFor();
      await assertAccessible(page, 'Catalogs, none yet');

      await page.getByRole('button', { name: 'Create catalog' }).click();
      await page.getByRole('alert').filter({ hasText: 'The catalog was not created' }).waitFor();
      assert.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true');

      await page.getByLabel('Name', { exact: true }).fill('Spring');
      await page.getByLabel('Product feed URL').fill(`${base}/products.json`);
      await page.getByRole('button', { name: 'Create catalog' }).click();
      const spring = page.getByRole('row', { name: /Spring/ });
      await spring.getByText(/^Ready; /).waitFor();
      await page.getByRole('button', { name: 'Items of Spring' }).click();
      // The import's sync job: its progress, and the item it refused with the field and the reason.
      const jobs = page.getByRole('list', { name: 'The latest sync jobs of Spring, newest first' });
      const job = jobs.getByRole('listitem').first();
      await job.getByText('Done: 4 items handled, 3 applied, 1 refused.').waitFor();
      assert.match(await job.getByRole('heading').innerText(), /^Feed import, /);
      assert.equal(await job.getByRole('progressbar').getAttribute('value'), '4');
      const refusedRow = job.getByRole('table', { name: /^Items refused by sync job/ }).getByRole('row', { name: /scarf/ });
      assert.match(await refusedRow.innerText(), /price/);
      assert.match(await refusedRow.innerText(), /12,50/);
      const items = page.getByRole('region', { name: 'The items of Spring' });
      await items.getByRole('row', { name: /Organic tee M/ }).waitFor();
      assert.equal(await items.getByRole('row').count(), 4);
      await assertAccessible(page, 'Catalogs, one imported with its items');

      await page.getByLabel('Name', { exact: true }).fill('Broken');
      await page.getByLabel('Product feed URL').fill(`${base}/missing.json`);
      await page.getByRole('button', { name: 'Create catalog' }).click();
      await page.getByRole('row', { name: /Broken/ }).getByText(/^Import failed: /).waitFor();
      await page.getByRole('button', { name: 'Items of Broken' }).click();
      await page.getByRole('list', { name: 'The latest sync jobs of Broken, newest first' }).getByText(/^Failed: .*404/).waitFor();
      await assertAccessible(page, 'Catalogs, a failed import');

      // Deleting is confirmed, and says what goes.
      await page.getByRole('button', { name: 'Delete catalog Broken' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete the catalog “Broken”?' });
      await dialog.getByText('Books already made from it stay as they are.', { exact: false }).waitFor();
      await assertAccessible(page, 'Catalogs, delete dialog');
      await dialog.getByRole('button', { name: 'Delete catalog' }).click();
      await page.getByText('The catalog Broken was deleted.').waitFor();
      assert.equal(await page.getByRole('row', { name: /Broken/ }).count(), 0);
      assert.equal(await page.getByRole('region', { name: 'Sync jobs of Broken' }).count(), 0);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('searches the items and makes a book from the ones found with a template chosen by thumbnail', async () => {
    await suite.signedIn('admin@example.com', null, async (tab) => {
      const { page } = tab;
      await page.goto(`${suite.svc.origin}/app/catalogs`);
      await heading(page, 'Catalogs');
      await page.getByRole('button', { name: 'Items of Spring' }).click();
      const items = page.getByRole('region', { name: 'The items of Spring' });
      await items.getByRole('row', { name: /Cap/ }).waitFor();

      // The search is the API's (filter[q]), and the screen says how many match.
      await page.getByLabel('Search items').fill('zzz');
      await page.getByRole('status').filter({ hasText: '0 items match' }).waitFor();
      assert.equal(await items.count(), 0);
      const form = page.getByRole('form', { name: 'Make a book from Spring' });
      await form.getByRole('checkbox', { name: 'Only the 0 items matching the search' }).check();
      await form.getByRole('button', { name: 'Make the book' }).click();
      await form.getByRole('alert').filter({ hasText: 'No item matches the search' }).waitFor();

      await page.getByLabel('Search items').fill('organic TEE');
      await page.getByRole('status').filter({ hasText: '2 items match' }).waitFor();
      assert.equal(await items.getByRole('row').count(), 3);

      // Templates are shown by their thumbnails (real images, loaded); the default is chosen.
      const templates = form.getByRole('group', { name: 'Template' });
      const classic = templates.getByRole('radio').first();
      await classic.waitFor();
      assert.ok(await classic.isChecked());
      await page.waitForFunction(() => [...document.querySelectorAll('.template-choice img')].every((i) => (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0));
      await assertAccessible(page, 'Catalogs, searching items and choosing a template');

      // Keyboard: the next template by arrow key, then the rest of the form by Tab and Space/Enter.
      await classic.focus();
      await page.keyboard.press('ArrowRight');
      const second = templates.getByRole('radio').nth(1);
      assert.ok(await second.isChecked());
      await form.getByLabel('Book name').fill('Spring tees');
      await form.getByRole('checkbox', { name: 'Only the 2 items matching the search' }).focus();
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await form.getByRole('link', { name: 'Open the book Spring tees' }).waitFor({ timeout: 180_000 });
      await form.getByRole('status').filter({ hasText: /^Ready/ }).waitFor();
      await assertAccessible(page, 'Catalogs, a book made from the catalog');

      const href = await form.getByRole('link', { name: 'Open the book Spring tees' }).getAttribute('href');
      const bookId = href!.split('/').pop()!;
      const books = await page.evaluate(async (id) => (await (await fetch(`/v1/books/${id}`)).json()) as { data: { name: string; page_count: number } }, bookId);
      assert.equal(books.data.name, 'Spring tees');
      assert.ok(books.data.page_count >= 2, `cover and products (${books.data.page_count} pages)`);
      await form.getByRole('link', { name: 'Open the book Spring tees' }).click();
      await heading(page, 'Spring tees');
      assert.deepEqual(tab.problems, []);
    });
  });

  it('shows an editor the catalogs without a create form', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await page.goto(`${suite.svc.origin}/app/catalogs`);
      await heading(page, 'Catalogs');
      await page.getByRole('row', { name: /Spring/ }).waitFor();
      await page.getByText('Only admins and owners create catalogs.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create catalog' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: /^Delete catalog/ }).count(), 0);
      await assertAccessible(page, 'Catalogs, an editor');
    });
  });
});
