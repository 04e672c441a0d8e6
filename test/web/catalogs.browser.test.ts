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
 * the items found, followed to ready with a link to it. Items picked one by
 * one and ordered are kept over a reload (with the rest of the book form)
 * until the book is made. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { books } from '../../src/modules/books/books.tables.ts';
import { bookSources } from '../../src/modules/content/content.tables.ts';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

const FEED = [
  { external_item_key: 'tee-s', title: 'Organic tee S', price: '19.90', currency: 'EUR' },
  { external_item_key: 'tee-m', title: 'Organic tee M', price: '19.90', currency: 'EUR' },
  { external_item_key: 'cap', title: 'Cap', price: '9.50', currency: 'EUR' },
  // Refused by the import: a price with a decimal comma.
  { external_item_key: 'scarf', title: 'Scarf', price: '12,50', currency: 'EUR' },
];

/** Reloads the catalogs screen and opens Spring's items again. */
async function reopen(page: Page): Promise<void> {
  await page.reload();
  await heading(page, 'Catalogs');
  await page.getByRole('button', { name: 'Items of Spring' }).click();
  await page.getByRole('region', { name: 'The items of Spring' }).getByRole('row', { name: /Hat 2/ }).waitFor();
}

describe('catalogs in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Shop', plan: 'company' }, env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' }, worker: true });
  let feeds: http.Server;
  let base: string;
  // A product image the render waits for: its request is told (`slowAsked`) and answered once `releaseSlow` is called.
  let askedSlow!: () => void;
  let releaseSlow!: () => void;
  const slowAsked = new Promise<void>((resolve) => (askedSlow = resolve));
  const released = new Promise<void>((resolve) => (releaseSlow = resolve));

  before(async () => {
    feeds = http.createServer((req, res) => {
      if (req.url === '/slow.jpg') {
        askedSlow();
        void released.then(() => {
          res.writeHead(404, { 'content-type': 'text/plain' });
          res.end('gone');
        });
      } else if (req.url === '/products.json') {
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
    releaseSlow();
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
      await suite.visit(page, '/app/catalogs', 'Catalogs');
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

  it('makes a book of items picked and ordered one by one, with a cover, reader settings and published; cancels a render; shows older sync jobs', async () => {
    // Six more sync jobs, one item each, sent through the API; the last item's image is the one the render waits for.
    const catalogs = (await suite.svc.request('GET', '/v1/catalogs', { key: suite.key })).body.data as { id: number; name: string }[];
    const spring = catalogs.find((c) => c.name === 'Spring')!;
    for (let n = 1; n <= 6; n++) {
      const item = [`external_item_key=hat-${n}`, `title=Hat ${n}`, 'price=5.00', 'currency=EUR', ...(n === 6 ? [`image=${base}/slow.jpg`] : [])];
      const sent = await suite.svc.request('POST', `/v1/catalogs/${spring.id}/items:bulk-upsert`, { key: suite.key, body: { items: [item] } });
      assert.equal(sent.status, 202);
    }
    // They are applied before the screen opens (a catalog changed by a finishing job is read again, and its items with it).
    for (;;) {
      const listed = (await suite.svc.request('GET', `/v1/catalogs/${spring.id}/sync-jobs`, { key: suite.key })).body.data as { status: string }[];
      if (listed.length === 7 && listed.every((j) => j.status === 'completed' || j.status === 'failed')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await suite.signedIn('admin@example.com', null, async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/catalogs', 'Catalogs');
      await page.getByRole('button', { name: 'Items of Spring' }).click();

      // The latest five sync jobs, then the older ones on asking.
      const jobs = page.getByRole('list', { name: 'The latest sync jobs of Spring, newest first' });
      await jobs.getByRole('listitem').first().getByText('Done: 1 item handled, 1 applied, 0 refused.').waitFor();
      await page.getByText('5 shown, newest first; there are older ones.').waitFor();
      assert.equal(await jobs.getByRole('listitem').count(), 5);
      await page.getByRole('button', { name: 'Show older sync jobs' }).click();
      await page.getByText('All 7 shown.').waitFor();
      assert.equal(await jobs.getByRole('listitem').count(), 7);
      assert.match(await jobs.getByRole('listitem').last().getByRole('heading').innerText(), /^Feed import, /);
      assert.equal(await page.getByRole('button', { name: 'Show older sync jobs' }).count(), 0);

      // Items picked one by one, then ordered from the keyboard.
      const items = page.getByRole('region', { name: 'The items of Spring' });
      await items.getByRole('row', { name: /Hat 2/ }).waitFor();
      for (const title of ['Hat 2', 'Cap', 'Organic tee S']) await items.getByRole('button', { name: `Add ${title}` }).click();
      const form = page.getByRole('form', { name: 'Make a book from Spring' });
      const picked = form.getByRole('region', { name: 'Items in the book (3), in page order' });
      assert.deepEqual(await picked.getByRole('listitem').locator('.item-title').allInnerTexts(), ['1. Hat 2', '2. Cap', '3. Organic tee S']);
      assert.equal((await items.getByRole('row', { name: /Cap/ }).innerText()).includes('Number 2'), true);
      await picked.getByRole('button', { name: 'Move up Organic tee S' }).focus();
      await page.keyboard.press('Enter');
      await picked.getByText('2. Organic tee S').waitFor();
      await page.waitForFunction(() => document.activeElement?.textContent === 'Move up Organic tee S');
      await page.keyboard.press('Enter');
      await picked.getByText('1. Organic tee S').waitFor();
      // At the top, "Move up" is off: focus is on the same item's "Move down".
      await page.waitForFunction(() => document.activeElement?.textContent === 'Move down Organic tee S');
      await picked.getByRole('button', { name: 'Take out Cap' }).click();
      const two = form.getByRole('region', { name: 'Items in the book (2), in page order' });
      const order = () => two.getByRole('listitem').locator('.item-title').allInnerTexts();
      assert.deepEqual(await order(), ['1. Organic tee S', '2. Hat 2']);
      await form.getByLabel('Book name').fill('Spring picks');

      // Kept over a reload (a draft in this browser): the same items in the same order, and the name typed.
      await reopen(page);
      await form.getByRole('status').filter({ hasText: 'Your unsaved choices from before are back in the form.' }).waitFor();
      assert.deepEqual(await order(), ['1. Organic tee S', '2. Hat 2']);
      assert.equal(await form.getByLabel('Book name').inputValue(), 'Spring picks');
      assert.match(await items.getByRole('row', { name: /Hat 2/ }).innerText(), /Number 2/);
      await assertAccessible(page, 'Catalogs, items picked for a book');

      // A template's larger preview, and chosen from it.
      await form.getByRole('button', { name: 'Larger preview of Showcase' }).click();
      const preview = page.getByRole('dialog', { name: 'Showcase, larger' });
      const large = preview.getByRole('img', { name: 'A sample page laid out with Showcase' });
      await large.waitFor();
      await page.waitForFunction(() => { const i = document.querySelector('.template-large') as HTMLImageElement | null; return !!i && i.complete && i.naturalWidth >= 1000; });
      await assertAccessible(page, 'Catalogs, a template\'s larger preview');
      await preview.getByRole('button', { name: 'Use Showcase' }).click();
      assert.equal(await preview.count(), 0);
      assert.ok(await form.getByRole('radio', { name: 'Showcase' }).isChecked());

      // The cover, two reader settings, and published when ready.
      await form.getByLabel('Cover title').fill('Picked for spring');
      await form.getByLabel('Cover text').fill('Two favourites of the season.');
      await form.getByLabel('Website on the cover').fill('shop.example.com');
      await form.getByText('Reader settings', { exact: true }).click();
      await form.getByLabel('Animation', { exact: true }).selectOption({ label: 'Fade' });
      await form.getByLabel('Page-turn sound').selectOption({ label: 'On' });
      await form.getByRole('radio', { name: 'Publish it' }).check();
      await assertAccessible(page, 'Catalogs, cover and reader settings of a book');
      await form.getByRole('button', { name: 'Make the book' }).click();
      const open = form.getByRole('link', { name: 'Open the book Spring picks' });
      await open.waitFor({ timeout: 180_000 });
      const bookId = (await open.getAttribute('href'))!.split('/').pop()!;
      const made = (await suite.svc.request('GET', `/v1/books/${bookId}`, { key: suite.key })).body.data;
      assert.equal(made.status, 'publish');
      assert.equal(made.settings.animation_type, 'fade');
      assert.equal(made.settings.sound_enabled, true);
      const db = suite.svc.runtime.database.db;
      const [row] = await db.select({ input: bookSources.input, template: bookSources.templateId }).from(bookSources)
        .innerJoin(books, eq(books.id, bookSources.bookId)).where(eq(books.randomId, bookId));
      assert.equal(row!.template, 3);
      assert.deepEqual(row!.input.items, ['tee-s', 'hat-2']);
      assert.deepEqual(row!.input.cover, { title: 'Picked for spring', description: 'Two favourites of the season.', website: 'shop.example.com' });

      // The book made, its draft is gone: after a reload, nothing is picked and the form is empty again.
      await reopen(page);
      await items.getByRole('button', { name: 'Add Hat 2' }).waitFor();
      assert.equal(await form.getByRole('region', { name: /^Items in the book/ }).count(), 0);
      assert.equal(await form.getByText('Your unsaved choices from before are back in the form.').count(), 0);
      assert.equal(await form.getByLabel('Book name').inputValue(), '');

      // A render cancelled while it waits for a product image: nothing of the book is kept.
      await items.getByRole('button', { name: 'Add Hat 6' }).click();
      await form.getByLabel('Book name').fill('Never made');
      await form.getByRole('button', { name: 'Make the book' }).click();
      await slowAsked;
      await form.getByRole('button', { name: 'Cancel making the book' }).click();
      await form.getByRole('status').filter({ hasText: 'Cancelled: the book was not made, and nothing of it is kept.' }).waitFor();
      assert.equal(await form.getByRole('button', { name: 'Cancel making the book' }).count(), 0);
      await assertAccessible(page, 'Catalogs, a render cancelled');
      releaseSlow();
      const left = await suite.svc.request('GET', '/v1/books?filter[name]=Never', { key: suite.key });
      assert.deepEqual(left.body.data, []);
      assert.deepEqual(tab.problems, []);
    });
  });

  it('shows an editor the catalogs without a create form', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/catalogs', 'Catalogs');
      await page.getByRole('row', { name: /Spring/ }).waitFor();
      await page.getByText('Only admins and owners create catalogs.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create catalog' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: /^Delete catalog/ }).count(), 0);
      await assertAccessible(page, 'Catalogs, an editor');
    });
  });
});
