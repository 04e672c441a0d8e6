/**
 * Share and embed in Chromium: "Copy link" puts the public link on the
 * clipboard; the embed code follows the size preset; a tracked link is
 * created, listed with its visits and copied; a viewer gets no "Create
 * tracked link". Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import decodeQR from 'qr/decode.js';
import sharp from 'sharp';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('share and embed in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Sharing' }, book: { name: 'Shared' } });

  it('copies the link, gives the embed code per preset, and creates a tracked link', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page, context } = tab;
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.svc.origin });
      await suite.visit(page, `/app/books/${suite.bookId}`, 'Shared');
      await page.getByRole('link', { name: 'Share and embed' }).click();
      await heading(page, 'Share and embed: Shared');
      await page.getByRole('button', { name: 'Copy link' }).click();
      await page.getByText('Link copied.').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${suite.svc.origin}/read/${suite.bookId}`);

      // The QR code on screen, and both downloads, read back as the link.
      const qr = page.getByRole('img', { name: 'QR code for the link to Shared' });
      assert.equal(await qrText(await qr.screenshot()), `${suite.svc.origin}/read/${suite.bookId}`);
      const svg = await downloaded(page, 'Download QR code (SVG)');
      assert.equal(svg.name, 'shared-qr.svg');
      assert.match(svg.bytes.toString('utf8'), /<title>QR code for the link to Shared<\/title>/);
      assert.equal(await qrText(svg.bytes), `${suite.svc.origin}/read/${suite.bookId}`);
      const png = await downloaded(page, 'Download QR code (PNG)');
      assert.equal(png.name, 'shared-qr.png');
      assert.equal(await qrText(png.bytes), `${suite.svc.origin}/read/${suite.bookId}`);

      const code = page.getByLabel('Embed code');
      assert.match(await code.inputValue(), /flipbook:resize/);
      await page.getByRole('radio', { name: /^Fixed size/ }).check();
      assert.match(await code.inputValue(), /width="800" height="600"/);
      await page.getByRole('radio', { name: 'Full page' }).check();
      assert.match(await code.inputValue(), /position:fixed/);
      await page.getByRole('button', { name: 'Copy embed code' }).click();
      await page.getByText('Embed code copied.').waitFor();
      await assertAccessible(page, 'Share and embed');

      await page.getByRole('button', { name: 'Create tracked link' }).click();
      await page.getByRole('alert').filter({ hasText: 'The link was not created' }).waitFor();
      await page.getByLabel('Name of the new link').fill('March newsletter');
      await page.getByRole('button', { name: 'Create tracked link' }).click();
      const list = page.getByRole('list', { name: 'Tracked links' });
      await list.getByRole('heading', { name: 'March newsletter' }).waitFor();
      await list.getByText('0 visits').waitFor();
      await list.getByRole('button', { name: 'Copy the link March newsletter' }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${suite.svc.origin}/read/${suite.bookId}?tl=march-newsletter`);
      await assertAccessible(page, 'Share and embed, with a tracked link');
      assert.deepEqual(tab.problems.filter((p) => !p.includes('/read/')), []);
    });
  });

  it('gives a viewer the link and the code but no tracked-link form', async () => {
    await suite.signedIn('viewer@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}/share`, 'Share and embed: Shared');
      await page.getByRole('list', { name: 'Tracked links' }).getByRole('heading', { name: 'March newsletter' }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create tracked link' }).count(), 0);
    });
  });
});

/** The text of the QR code in an image (PNG or SVG), decoded by the library's own reader. */
async function qrText(image: Buffer): Promise<string> {
  const { data, info } = await sharp(image, { density: 144 }).flatten({ background: '#fff' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return decodeQR({ width: info.width, height: info.height, data });
}

async function downloaded(page: Page, button: string): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
  return { name: download.suggestedFilename(), bytes: await readFile((await download.path())!) };
}
