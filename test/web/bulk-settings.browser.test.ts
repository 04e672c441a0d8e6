/**
 * Bulk settings in Chromium: an editor selects two books in the books list,
 * goes on to bulk settings with them chosen, sees what they share, changes
 * two settings and follows the batch to "Done" with each book's outcome;
 * the summary then shows the change, and "All books" shows where the third
 * book differs. A book changed elsewhere after the summary was read is
 * refused (409) in words naming it, and applying again succeeds. A viewer
 * is told to ask an editor and sees no control. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eq } from 'drizzle-orm';
import type { Browser } from 'playwright-core';
import { books } from '../../src/modules/books/books.tables.ts';
import { insertBook } from '../factories.ts';
import { assertAccessible, heading, launchWebBrowser, openApp, personIn, signInThroughScreen, startWebService, WEB_SKIP, type WebService } from './web-browser.ts';

describe('bulk settings in the application', { skip: WEB_SKIP }, () => {
  let svc: WebService;
  let browser: Browser;
  let workspaceId: number;
  const ids: Record<string, string> = {};

  before(async () => {
    // The worker runs the batch.
    svc = await startWebService({}, { worker: true });
    workspaceId = (await svc.workspace({ name: 'Many books', plan: 'company' })).id;
    for (const name of ['Atlas', 'Bravo', 'Cargo']) ids[name] = (await insertBook(svc, workspaceId, { name })).randomId;
    browser = await launchWebBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('applies settings to the selected books and follows the batch to its end', async () => {
    await personIn(svc, workspaceId, 'editor@example.com', 'editor');
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'editor@example.com');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Books' }).click();
      await heading(page, 'Books');
      await page.getByRole('checkbox', { name: 'Select Atlas' }).check();
      await page.getByRole('checkbox', { name: 'Select Bravo' }).check();
      await page.getByRole('link', { name: 'Change settings of the selected books' }).click();
      await heading(page, 'Bulk settings');
      assert.equal(await page.getByRole('radio', { name: 'Books I choose' }).isChecked(), true);
      assert.equal(await page.getByRole('checkbox', { name: 'Atlas' }).isChecked(), true);
      assert.equal(await page.getByRole('checkbox', { name: 'Cargo' }).isChecked(), false);
      await page.getByText('2 books chosen.').waitFor();
      const sound = page.getByRole('row', { name: /Page-turn sound/ });
      await sound.getByText('All: Off').waitFor();
      await assertAccessible(page, 'Bulk settings, two books chosen');

      // A book changed elsewhere after the summary was read: refused, named, and read again.
      await page.getByLabel('Page-turn sound').selectOption({ label: 'On' });
      await page.getByLabel('Animation', { exact: true }).selectOption({ label: 'Fade' });
      await svc.runtime.database.db.update(books).set({ settingsRevision: 'f'.repeat(64) }).where(eq(books.randomId, ids.Bravo!));
      await page.getByRole('button', { name: 'Apply to 2 books' }).click();
      await page.getByRole('alert').filter({ hasText: 'The settings were not applied' }).waitFor();
      await page.getByText('Changed elsewhere meanwhile: Bravo.').waitFor();
      await assertAccessible(page, 'Bulk settings, a conflict');

      // Applying again goes over the revision read again, and the batch is followed to its end.
      await page.getByRole('button', { name: 'Apply to 2 books' }).click();
      await page.getByText('Done: all 2 books were changed.').waitFor();
      const each = page.getByRole('list', { name: 'Each book' });
      assert.deepEqual((await each.getByRole('listitem').allInnerTexts()).map((t) => t.trim()), ['Atlas: Changed', 'Bravo: Changed']);
      assert.equal(await page.getByRole('progressbar', { name: 'Books done' }).getAttribute('value'), '2');
      await sound.getByText('All: On').waitFor();
      await page.getByRole('row', { name: /^Animation All/ }).getByText('All: Fade').waitFor();
      await assertAccessible(page, 'Bulk settings, done');

      // All books: the third book differs.
      await page.getByRole('radio', { name: /All books/ }).check();
      await page.getByText('3 books chosen.').waitFor();
      await sound.getByText('Differs:').waitFor();
      assert.match(await sound.innerText(), /Cargo: Off/);
      assert.deepEqual(tab.problems, []);
    } finally {
      await tab.close();
    }
  });

  it('shows a viewer no control', async () => {
    await personIn(svc, workspaceId, 'viewer@example.com', 'viewer');
    const tab = await openApp(browser);
    try {
      const { page } = tab;
      await signInThroughScreen(page, svc, 'viewer@example.com');
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bulk settings' }).click();
      await heading(page, 'Bulk settings');
      await page.getByText('Only editors, admins and owners change the settings of books.').waitFor();
      assert.equal(await page.getByRole('button').filter({ hasText: /^Apply/ }).count(), 0);
      await assertAccessible(page, 'Bulk settings, a viewer');
    } finally {
      await tab.close();
    }
  });
});
