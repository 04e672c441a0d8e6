/**
 * Brand take-over in a real browser (Debian Chromium): the reader with the
 * service's look, then with the workspace brand (logo, colors, social links,
 * Google Analytics loaded under the page's CSP), then back. Screenshots of
 * both states go to artifacts/brand/.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makePdf } from '../documents.ts';
import { startService, type TestService } from '../helpers.ts';
import { BROWSER_SKIP, launchBrowser, openReader, openTab, publishBook, type ReaderTab } from '../reader/browser.ts';
import { logoPng, sendBrand } from './brand-helpers.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../artifacts/brand');

async function shot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

describe('brand take-over in the reader (browser)', { skip: BROWSER_SKIP }, () => {
  let svc: TestService;
  let browser: Browser;
  let ws: { id: number; key: string };
  let book: { randomId: string; url: string };
  const tabs: ReaderTab[] = [];

  before(async () => {
    svc = await startService();
    ws = await svc.workspace({ plan: 'company' });
    browser = await launchBrowser();
    book = await publishBook(svc, ws.key, await makePdf({ pages: 4 }), 'Brand book.pdf', { share_social_media: true });
    const created = await sendBrand(svc, ws.key, 'POST', {
      company_name: 'Acme Publishing', website_url: 'https://acme.example/', google_analytics: 'G-ACME1234',
      primary_color: '#0b3d91', secondary_color: '#ffc940', tertiary_color: '#d8dee9',
      linkedin: 'https://www.linkedin.com/company/acme', youtube: 'https://www.youtube.com/@acme',
    }, { bytes: await logoPng(800, 200, '#e4572e'), name: 'logo.png' });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    for (const t of tabs) await t.close().catch(() => undefined);
    await browser?.close();
    await svc?.stop();
  });

  async function tab(): Promise<ReaderTab> {
    const t = await openTab(browser);
    tabs.push(t);
    // No network here: Google's loader is answered locally, after the page's CSP has allowed the request.
    await t.page.route('https://www.googletagmanager.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/javascript', body: 'window.__gtagLoaded = true;' }));
    return t;
  }

  const look = (page: Page) => page.evaluate(() => {
    const bar = getComputedStyle(document.querySelector('.bar.top')!);
    const stage = getComputedStyle(document.querySelector('#stage')!);
    const logo = document.querySelector<HTMLImageElement>('.brand-mark img');
    return {
      bar: bar.backgroundColor,
      barText: bar.color,
      stage: stage.backgroundColor,
      badge: Boolean(document.querySelector('.badge')),
      logo: logo ? { loaded: logo.complete && logo.naturalWidth > 0, href: logo.closest('a')?.href ?? null } : null,
      social: [...document.querySelectorAll<HTMLAnchorElement>('.tools a.social')].map((a) => a.href),
      socialAfterShare: Boolean(document.querySelector('#open-share + a.social')),
      gtag: (window as unknown as { __gtagLoaded?: boolean }).__gtagLoaded === true,
      dataLayer: ((window as unknown as { dataLayer?: unknown[] }).dataLayer ?? []).length,
    };
  });

  it('shows the brand while take-over is on and the default look once it is off, with screenshots', async () => {
    const shots: string[] = [];
    let t = await tab();
    await openReader(t.page, book.url);
    const plain = await look(t.page);
    assert.equal(plain.bar, 'rgb(29, 31, 35)');
    assert.equal(plain.badge, true);
    assert.equal(plain.logo, null);
    assert.deepEqual(plain.social, []);
    assert.equal(plain.gtag, false);
    shots.push(await shot(t.page, 'reader-default'));
    assert.deepEqual(t.problems, []);

    assert.equal((await svc.request('POST', '/v1/toggle-take-over-branding', { key: ws.key })).body.data.brand.take_over_branding, true);
    t = await tab();
    await openReader(t.page, book.url);
    await t.page.waitForFunction(() => (window as unknown as { __gtagLoaded?: boolean }).__gtagLoaded === true);
    await t.page.waitForFunction(() => document.querySelector<HTMLImageElement>('.brand-mark img')?.complete);
    const branded = await look(t.page);
    assert.equal(branded.bar, 'rgb(11, 61, 145)', 'primary color on the bars');
    assert.equal(branded.barText, 'rgb(255, 255, 255)', 'readable text on them');
    assert.equal(branded.stage, 'rgb(216, 222, 233)', 'tertiary color behind the pages');
    assert.equal(branded.badge, false);
    assert.deepEqual(branded.logo, { loaded: true, href: 'https://acme.example/' });
    assert.deepEqual(branded.social, ['https://www.linkedin.com/company/acme', 'https://www.youtube.com/@acme']);
    assert.equal(branded.socialAfterShare, true, 'beside the share button');
    assert.equal(branded.gtag, true, 'Google Analytics loaded under the CSP');
    assert.ok(branded.dataLayer >= 2, 'gtag configured');
    // The accent color on the dialogs' buttons.
    await t.page.click('#open-search');
    assert.equal(await t.page.evaluate(() => getComputedStyle(document.querySelector('#search-form .textbtn')!).backgroundColor), 'rgb(255, 201, 64)');
    await t.page.keyboard.press('Escape');
    shots.push(await shot(t.page, 'reader-brand-take-over'));
    assert.deepEqual(t.problems, [], 'no console errors or CSP violations');

    // Off again: the very next page view has the default look.
    assert.equal((await svc.request('POST', '/v1/toggle-take-over-branding', { key: ws.key })).body.data.brand.take_over_branding, false);
    t = await tab();
    await openReader(t.page, book.url);
    const restored = await look(t.page);
    assert.deepEqual(restored, plain);
    shots.push(await shot(t.page, 'reader-default-restored'));
    console.log(`screenshots:\n  ${shots.join('\n  ')}`);
  });
});
