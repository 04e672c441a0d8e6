/**
 * A reader in Debian's Chromium clicks a link in a page of a book that came
 * through a tracked link; the link_clicked event reaches the receiver of a
 * subscription filtered on that tracked link, signed (verified with the
 * standardwebhooks package).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { eventually, startService, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, launchBrowser, openReader, openTab, publishBook, waitForPages } from '../reader/browser.ts';
import { startReceiver, verify, type Receiver } from './receiver.ts';

/** Headless Chromium names itself in its user agent, and bots are not counted: present as a desktop Chrome. */
const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('webhooks from a reader in Chromium', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let browser: Browser;
  let receiver: Receiver;

  before(async () => {
    svc = await startService({ env: { OUTBOUND_ALLOWED_HOSTS: '127.0.0.1' } });
    receiver = await startReceiver();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
    await receiver?.close();
  });

  it("delivers the reader's link_clicked to a subscription filtered on the tracked link", async () => {
    const ws = await svc.workspace();
    const book = await publishBook(svc, ws.key, await makePdf({ pages: 4, links: true }), 'Webhooks.pdf');
    const link = await svc.request('POST', `/v1/books/${book.randomId}/tracked-links`, { key: ws.key, body: { name: 'Newsletter', slug: 'newsletter' } });
    assert.equal(link.status, 201, link.text);
    const sub = await svc.request('POST', '/v1/webhook-subscriptions', {
      key: ws.key,
      body: { name: 'Clicks', target_url: `${receiver.url}/clicks`, event_types: ['link_clicked'], filters: [{ type: 'tracked_link', value: link.body.data.id }] },
    });
    assert.equal(sub.status, 201, sub.text);

    const t = await openTab(browser, { userAgent: DESKTOP_CHROME });
    await t.context.route('https://example.com/**', (route) => route.fulfill({ status: 200, body: 'ok' }));
    await openReader(t.page, link.body.data.url);
    await waitForPages(t.page, '1');
    const [popup] = await Promise.all([t.context.waitForEvent('page'), t.page.locator('#stage .page[data-page="1"] a[href="https://example.com/annotated"]').click()]);
    await popup.close();
    await t.page.close();
    await t.close();

    const request = await eventually(async () => receiver.received.find((r) => r.path === '/clicks'), { timeoutMs: 30_000 });
    const payload = verify(sub.body.data.signing_secret, request) as any;
    assert.equal(payload.type, 'link_clicked');
    assert.equal(payload.data.book_id, book.randomId);
    assert.equal(payload.data.tracked_link_id, link.body.data.id);
    assert.equal(payload.data.page_number, 1);
    assert.deepEqual(payload.data.metadata, [{ url: 'https://example.com/annotated' }]);
    // Only the click: the session's other events were not asked for.
    await eventually(async () => {
      const res = await svc.request('GET', `/v1/webhook-subscriptions/${sub.body.data.id}/deliveries`, { key: ws.key });
      return res.body.data.length === 1 && res.body.data[0].status === 'succeeded';
    });
    assert.equal(receiver.received.filter((r) => r.path === '/clicks').length, 1);
  });
});
