/**
 * The access gate and embed domains in Debian's Chromium: a reader signs in
 * through the form and a link from the outbox, once; an unlisted address is
 * refused; an expired link does not open. A book with an embed-domain list
 * loads in an iframe on a listed host and is refused on another (test host
 * names resolve to 127.0.0.1 through Chromium's --host-resolver-rules).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { magicLinks } from '../../src/modules/access/access.tables.ts';
import { makePdf } from '../documents.ts';
import { startService, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, launchBrowser, openTab, publishBook, screenshot, waitForReader } from '../reader/browser.ts';

describe('access gate and embed domains in a browser', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let ws: { id: number; key: string };
  let browser: Browser;
  let embedder: Server;
  let embedderPort: number;
  let pdf: Buffer;

  before(async () => {
    svc = await startService();
    ws = await svc.workspace();
    pdf = await makePdf({ pages: 4 });
    // Any host name the page is asked for serves an iframe of the reader URL in its query.
    embedder = createServer((request, response) => {
      const src = new URL(request.url ?? '/', 'http://embedder').searchParams.get('src') ?? '';
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(`<!doctype html><title>Partner page</title><h1>Our catalogue</h1><iframe id="book" src="${src.replace(/"/g, '')}" width="900" height="600"></iframe>`);
    });
    await new Promise<void>((resolve) => embedder.listen(0, '127.0.0.1', resolve));
    embedderPort = (embedder.address() as AddressInfo).port;
    browser = await launchBrowser(['--host-resolver-rules=MAP *.example 127.0.0.1']);
  });
  after(async () => {
    await browser?.close();
    embedder?.close();
    await svc?.stop();
  });

  async function latestLink(to: string): Promise<string> {
    const [message] = await svc.runtime.services.mailer.list({ to, limit: 1 });
    assert.ok(message, `a message to ${to}`);
    return /(http:\/\/\S+\/access\/[A-Za-z0-9_-]{43})/.exec(message.text)![1]!;
  }

  async function requestLink(page: Page, email: string) {
    await page.fill('#email', email);
    await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
  }

  it('lets a listed reader in through a magic link, once, and refuses others', async () => {
    const book = await publishBook(svc, ws.key, pdf, 'Dealer catalogue.pdf', { magic_link_error_message: 'Only our dealers can read this.' });
    for (const email of ['ann@example.com', 'partner.org']) {
      await svc.request('POST', '/v1/subscribers', { key: ws.key, body: { book_id: book.randomId, email } });
    }
    const tab = await openTab(browser);
    try {
      const { page } = tab;
      const gate = await page.goto(book.url);
      assert.equal(gate!.status(), 401);
      assert.equal(await page.locator('h1').textContent(), 'Sign in to read');
      await screenshot(page, 'gate-form');

      await requestLink(page, 'mallory@elsewhere.com');
      assert.equal(await page.locator('.error').textContent(), 'Only our dealers can read this.');

      await requestLink(page, 'ann@example.com');
      assert.equal(await page.locator('h1').textContent(), 'Check your inbox');
      const link = await latestLink('ann@example.com');
      await page.goto(link);
      await waitForReader(page);
      assert.equal(new URL(page.url()).pathname, `/read/${book.randomId}`);
      // The session stays: reloading the reader does not ask again.
      await page.reload();
      await waitForReader(page);

      await page.goto(link);
      assert.equal(await page.locator('h1').textContent(), 'This link was already used');
      assert.deepEqual(tab.problems.filter((p) => !p.includes('status of 4')), []);
    } finally {
      await tab.close();
    }

    // A listed domain admits its addresses; an expired link does not open.
    const other = await openTab(browser);
    try {
      const { page } = other;
      await page.goto(book.url);
      await requestLink(page, 'bob@partner.org');
      const expired = await latestLink('bob@partner.org');
      await svc.runtime.database.db.update(magicLinks).set({ expiresAt: new Date(Date.now() - 1000) }).where(eq(magicLinks.email, 'bob@partner.org'));
      await page.goto(expired);
      assert.equal(await page.locator('h1').textContent(), 'This link has expired');
      await requestLink(page, 'bob@partner.org');
      await page.goto(await latestLink('bob@partner.org'));
      await waitForReader(page);
    } finally {
      await other.close();
    }
  });

  it('loads in an iframe on a listed host and is refused on another', async () => {
    const book = await publishBook(svc, ws.key, pdf, 'Embedded catalogue.pdf');
    await svc.request('POST', `/v1/books/${book.randomId}/embed-domains`, { key: ws.key, body: { domain: 'shop.example' } });
    const embedded = (host: string) => `http://${host}:${embedderPort}/?src=${encodeURIComponent(book.url)}`;

    const tab = await openTab(browser);
    try {
      const { page } = tab;
      const statuses = new Map<string, number>();
      page.on('response', (r) => {
        if (r.url() === book.url) statuses.set(new URL(page.url()).hostname, r.status());
      });

      await page.goto(embedded('www.shop.example'));
      const frame = page.frameLocator('#book');
      await frame.locator('html[data-ready="true"]').waitFor({ timeout: 15_000 });
      assert.equal(statuses.get('www.shop.example'), 200);
      await screenshot(page, 'embed-listed-host');

      await page.goto(embedded('evil.example'));
      await page.frameLocator('#book').locator('h1').waitFor();
      assert.equal(statuses.get('evil.example'), 403);
      const notice = page.frameLocator('#book');
      assert.equal(await notice.locator('h1').textContent(), 'Not available on this site', 'the frame says why');
      assert.equal(await notice.locator('#stage').count(), 0, 'and shows nothing of the book');
      await screenshot(page, 'embed-unlisted-host');
    } finally {
      await tab.close();
    }
  });
});
