/**
 * The embed code at work on another site, in Chromium: "Copy embed code" on
 * the share screen, pasted into a page served on another local port under
 * another host name (shop.example, mapped to 127.0.0.1), shows the reader
 * there. Listing another website under "Embed domains" on the Access screen
 * shuts that page out (the reader refuses the frame); listing the shop lets
 * it in again.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('the embed code on another site', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Embeds' }, book: { name: 'Embedded', pageCount: 2 }, hosts: ['shop.example', 'elsewhere.example'] });
  let site: Server;
  let pasted = '';

  before(async () => {
    // The customer's site: one page holding whatever embed code was pasted.
    site = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><html lang="en"><head><title>Shop</title></head><body><h1>Our catalogue</h1>${pasted}</body></html>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    site?.close();
  });

  it('shows the book on another site, and follows the embed domains', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page, context } = tab;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.svc.origin });
      await suite.visit(page, `/app/books/${suite.bookId}`, 'Embedded');
      await page.getByRole('link', { name: 'Embed', exact: true }).click();
      await heading(page, 'Share and embed: Embedded');
      await page.getByRole('radio', { name: /^Fixed size/ }).check();
      await page.getByRole('button', { name: 'Copy embed code' }).click();
      await page.getByText('Embed code copied.').waitFor();
      pasted = await page.evaluate(() => navigator.clipboard.readText());
      assert.match(pasted, /^<iframe /);

      const shop = await suite.browser.newPage();
      const shopUrl = `http://shop.example:${(site.address() as AddressInfo).port}/`;
      try {
        assert.equal(await embeddedStatus(shop, shopUrl), 200);
        await shop.frameLocator('iframe').getByRole('heading', { name: 'Embedded' }).waitFor();

        // Only another website may embed it now: the shop's frame is refused.
        await suite.visit(page, `/app/books/${suite.bookId}/access`, 'Access: Embedded');
        await page.getByLabel('Website').fill('elsewhere.example');
        await page.getByRole('button', { name: 'Add embed domain' }).click();
        await page.getByRole('list', { name: 'Embed domains' }).locator('.item-title').getByText('elsewhere.example', { exact: true }).waitFor();
        assert.equal(await embeddedStatus(shop, shopUrl), 403);
        assert.equal(await shop.frameLocator('iframe').getByRole('heading', { name: 'Embedded' }).count(), 0);

        // The shop listed as well: shown again.
        await page.getByLabel('Website').fill(shopUrl);
        await page.getByRole('button', { name: 'Add embed domain' }).click();
        await page.getByRole('list', { name: 'Embed domains' }).locator('.item-title').getByText('shop.example', { exact: true }).waitFor();
        assert.equal(await embeddedStatus(shop, shopUrl), 200);
        await shop.frameLocator('iframe').getByRole('heading', { name: 'Embedded' }).waitFor();
      } finally {
        await shop.close();
      }
      assert.deepEqual(tab.problems, []);
    });
  });
});

/** Opens the shop's page and answers the status of the reader's page requested by its frame. */
async function embeddedStatus(page: Page, url: string): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().includes('/read/') && r.request().frame() !== page.mainFrame()),
    page.goto(url),
  ]);
  return response.status();
}
