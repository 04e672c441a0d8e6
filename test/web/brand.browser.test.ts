/**
 * Brand in Chromium: an admin is refused in words without a company name,
 * sees a colour and a logo in the reader's preview (the real reader) before saving, saves them (the
 * logo uploaded as multipart through the typed client), finds them after a
 * reload, keeps an unsaved edit over a reload, turns brand take-over on and
 * sees the brand in a public book's reader; the preview shows the book
 * chosen. An editor sees the brand with no
 * write control. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { insertBook } from '../factories.ts';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('brand in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Branded', plan: 'company' }, book: { name: 'Catalogue' } });

  it('previews, saves and takes over with the brand', async () => {
    await suite.signedIn('admin@example.com', 'admin', async (tab) => {
      const { page } = tab;
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Brand' }).click();
      await heading(page, 'Brand');
      await assertAccessible(page, 'Brand, none yet');

      // Refused in words beside the fields.
      await page.getByLabel('Website').fill('not a url');
      await page.getByRole('button', { name: 'Save brand' }).click();
      await page.getByRole('alert').filter({ hasText: 'The brand was not saved' }).waitFor();
      assert.equal(await page.getByLabel('Company name').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByLabel('Website').getAttribute('aria-invalid'), 'true');
      await assertAccessible(page, 'Brand, a refusal');

      // The preview is the reader itself, wearing the brand as typed before it is saved.
      await page.getByLabel('Company name').fill('Acme');
      await page.getByLabel('Website').fill('https://acme.example');
      await page.getByLabel('Bar colour').fill('#123456');
      const frame = page.frameLocator('iframe[title="Preview: Catalogue with the brand of Acme"]');
      const bar = frame.locator('header.bar.top');
      await page.waitForFunction(() => {
        const doc = document.querySelector<HTMLIFrameElement>('iframe.reader-frame')?.contentDocument;
        const header = doc?.querySelector('header.bar.top');
        return header ? getComputedStyle(header).backgroundColor === 'rgb(18, 52, 86)' : false;
      }, undefined, { timeout: 15_000 });
      assert.equal(await bar.evaluate((e) => getComputedStyle(e).backgroundColor), 'rgb(18, 52, 86)');
      assert.equal(await frame.locator('.brand-mark').getAttribute('href'), 'https://acme.example');
      await frame.getByText('Acme', { exact: true }).first().waitFor();
      const logo = await sharp({ create: { width: 200, height: 80, channels: 3, background: '#e03030' } }).png().toBuffer();
      await page.getByLabel('Logo').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: logo });
      await frame.locator('.brand-mark img[src^="data:image/webp"]').waitFor({ timeout: 15_000 });
      assert.equal(await frame.getByRole('img', { name: 'Acme' }).count(), 1);
      await assertAccessible(page, 'Brand, previewed');
      await page.getByRole('button', { name: 'Save brand' }).click();
      await page.getByText('The brand was saved.').waitFor();

      await page.reload();
      await heading(page, 'Brand');
      assert.equal(await page.getByLabel('Company name').inputValue(), 'Acme');
      assert.equal(await page.getByLabel('Bar colour').inputValue(), '#123456');
      const stored = (await page.frameLocator('iframe.reader-frame').locator('.brand-mark img').getAttribute('src'))!;
      assert.doesNotMatch(stored, /^data:/);
      assert.equal((await page.request.get(stored)).status(), 200);

      // An unsaved edit survives a reload.
      await page.getByLabel('About the brand').fill('Makers of everything');
      await page.reload();
      await heading(page, 'Brand');
      await page.getByText('Your unsaved changes from before are back in the form.').waitFor();
      assert.equal(await page.getByLabel('About the brand').inputValue(), 'Makers of everything');
      await page.getByRole('button', { name: 'Save brand' }).click();
      await page.getByText('The brand was saved.').waitFor();

      await page.getByRole('button', { name: 'Turn on brand take-over' }).click();
      await page.getByRole('button', { name: 'Turn off brand take-over' }).waitFor();
      await assertAccessible(page, 'Brand, saved and taken over');

      // The public reader now wears the brand.
      const reader = await page.context().newPage();
      await reader.goto(`${suite.svc.origin}/read/${suite.bookId}`);
      await reader.getByRole('img', { name: 'Acme' }).waitFor();
      assert.equal(await reader.locator('.brand-mark').getAttribute('href'), 'https://acme.example');
      await reader.close();
      assert.deepEqual(tab.problems.filter((p) => !p.includes('/read/')), []);
    });
  });

  it('previews the brand on the book chosen', async () => {
    // A newer book: the preview starts on it, and the person picks the other one.
    await insertBook(suite.svc, suite.workspaceId, { name: 'Brochure', status: 'publish', publishedDate: new Date(), updatedAt: new Date(Date.now() + 60_000) });
    await suite.signedIn('admin@example.com', null, async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/brand', 'Brand');
      await page.locator('iframe[title="Preview: Brochure with the brand of Acme"]').waitFor();
      const choice = page.getByRole('combobox', { name: 'Book to preview' });
      assert.equal(await choice.locator('option:checked').innerText(), 'Brochure');
      await choice.selectOption({ label: 'Catalogue' });
      const frame = page.frameLocator('iframe[title="Preview: Catalogue with the brand of Acme"]');
      await frame.getByRole('img', { name: 'Acme' }).waitFor({ timeout: 15_000 });
      await page.waitForFunction(() => (bookId: string) => document.querySelector<HTMLIFrameElement>('iframe.reader-frame')?.src.includes(`/read/${bookId}/preview`), suite.bookId, { timeout: 15_000 });
      await assertAccessible(page, 'Brand, another book previewed');
      assert.deepEqual(tab.problems.filter((p) => !p.includes('/read/')), []);
    });
  });

  it('shows an editor the brand without write controls', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, '/app/brand', 'Brand');
      assert.equal(await page.getByLabel('Company name').inputValue(), 'Acme');
      assert.equal(await page.getByRole('button', { name: 'Save brand' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: /brand take-over/ }).count(), 0);
      await page.getByText('Only admins and owners change the brand.').waitFor();
      await assertAccessible(page, 'Brand, an editor');
    });
  });
});
