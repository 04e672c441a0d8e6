/**
 * Bulk settings in Chromium: an editor selects two books in the books list,
 * goes on to bulk settings with them chosen, sees what they share, changes
 * two settings and follows the batch to "Done" with each book's outcome;
 * the summary then shows the change, and "All books" shows where the third
 * book differs. A book changed elsewhere after the summary was read is
 * refused (409) in words naming it, and applying again succeeds. A viewer
 * is told to ask an editor and sees no control. Text settings (watermark,
 * description, download password, sign-in message) and the access list
 * change two books; the one without a list fails in words, gets a list
 * elsewhere and "Retry the failed books" changes it; on PostgreSQL a batch
 * is cancelled while its first book waits, and the second is not changed. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { books } from '../../src/modules/books/books.tables.ts';
import { insertBook } from '../factories.ts';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('bulk settings in the application', { skip: WEB_SKIP }, () => {
  // The worker runs the batch.
  const suite = webSuite({ workspace: { name: 'Many books', plan: 'company' }, worker: true });
  const ids: Record<string, string> = {};

  before(async () => {
    for (const name of ['Atlas', 'Bravo', 'Cargo']) ids[name] = (await insertBook(suite.svc, suite.workspaceId, { name })).randomId;
  });

  it('applies settings to the selected books and follows the batch to its end', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
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
      await suite.svc.runtime.database.db.update(books).set({ settingsRevision: 'f'.repeat(64) }).where(eq(books.randomId, ids.Bravo!));
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
    });
  });

  it('changes text settings, retries the book that failed and cancels a batch in flight', async () => {
    // Atlas has an access list; Bravo has none, so "keep each book's own list" fails for it (access_list_empty).
    assert.equal((await suite.svc.request('POST', '/v1/subscribers', { key: suite.key, body: { book_id: ids.Atlas!, email: 'ann@example.com' } })).status, 201);
    await suite.signedIn('texts@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/bulk-settings?books=${ids.Atlas},${ids.Bravo}`, 'Bulk settings');
      await page.getByText('2 books chosen.').waitFor();
      const sound = page.getByRole('row', { name: /Page-turn sound/ });
      await sound.getByText(/^All:/).waitFor();

      await page.getByLabel('Watermark', { exact: true }).selectOption({ label: 'Set to…' });
      await page.getByLabel('New watermark').fill('CONFIDENTIAL');
      await page.getByLabel('Description', { exact: true }).selectOption({ label: 'Set to…' });
      await page.getByLabel('New description').fill('The spring range');
      await page.getByLabel('Download password', { exact: true }).selectOption({ label: 'Set to…' });
      await page.getByLabel('New download password').fill('s3cret-pass');
      await page.getByLabel('Sign-in message', { exact: true }).selectOption({ label: 'Set to…' });
      await page.getByLabel('New sign-in message').fill('Partners only: sign in with your work address.');
      await page.getByLabel('Access list', { exact: true }).selectOption({ label: 'On: only people on each book’s own list' });
      await assertAccessible(page, 'Bulk settings, text settings chosen');
      await page.getByRole('button', { name: 'Apply to 2 books' }).click();
      await page.getByText('Done: 1 changed, 1 failed.').waitFor();
      const each = page.getByRole('list', { name: 'Each book' });
      assert.equal((await each.getByRole('listitem').nth(0).innerText()).trim(), 'Atlas: Changed');
      assert.match(await each.getByRole('listitem').nth(1).innerText(), /^Bravo: Failed \(.*has none/);
      // The password is never kept in the browser's draft.
      assert.doesNotMatch(await page.evaluate(() => JSON.stringify(localStorage)), /s3cret-pass/);

      // Bravo gets a list elsewhere; retrying the failed book now changes it.
      assert.equal((await suite.svc.request('POST', '/v1/subscribers', { key: suite.key, body: { book_id: ids.Bravo!, email: 'bob@example.com' } })).status, 201);
      await page.getByRole('button', { name: 'Retry the failed books' }).click();
      await page.getByRole('heading', { name: 'Retry of the failed books' }).waitFor();
      await page.getByText('Done: all 1 book was changed.').waitFor();
      await page.getByRole('row', { name: /^Watermark/ }).getByText('All: CONFIDENTIAL').waitFor();
      await page.getByRole('row', { name: /^Download password/ }).getByText('All: On').waitFor();
      for (const id of [ids.Atlas!, ids.Bravo!]) {
        const book = (await suite.svc.request('GET', `/v1/books/${id}`, { key: suite.key })).body.data;
        assert.equal(book.description, 'The spring range');
        assert.equal(book.settings.watermark, 'CONFIDENTIAL');
      }
      await assertAccessible(page, 'Bulk settings, retried');

      // Cancel while a batch runs. The PostgreSQL pass holds the event log (SHARE mode, as a long maintenance task
      // might) so the first book's write waits inside its transaction; PGlite's single connection cannot wait like that.
      if (process.env.DATABASE_URL) {
        let release!: () => void;
        let held!: () => void;
        const locked = new Promise<void>((resolve) => (held = resolve));
        const holding = suite.svc.runtime.database.db.transaction(async (tx) => {
          await tx.execute(sql`lock table domain_events in share mode`);
          held();
          await new Promise<void>((resolve) => (release = resolve));
        });
        await locked;
        try {
          // Both books have the sound on since the first test.
          await page.getByLabel('Page-turn sound').selectOption({ label: 'Off' });
          await page.getByRole('button', { name: 'Apply to 2 books' }).click();
          await page.getByText('Changing the books: 0 of 2 done.').waitFor();
          await page.getByRole('button', { name: 'Cancel' }).click();
          await page.getByText('Cancelling: the book being changed is finished first; 1 not changed.').waitFor();
        } finally {
          release();
          await holding;
        }
        await page.getByText('Cancelled: 1 changed, 0 failed, 1 not changed.').waitFor();
        assert.deepEqual((await each.getByRole('listitem').allInnerTexts()).map((t) => t.trim()), ['Atlas: Changed', 'Bravo: Cancelled, not changed']);
        await sound.getByText('Differs:').waitFor();
        assert.match(await sound.innerText(), /Atlas: Off; Bravo: On/);
        await assertAccessible(page, 'Bulk settings, cancelled');
      }
      assert.deepEqual(tab.problems, []);
    });
  });

  it('shows a viewer no control', async () => {
    await suite.signedIn('viewer@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Bulk settings' }).click();
      await heading(page, 'Bulk settings');
      await page.getByText('Only editors, admins and owners change the settings of books.').waitFor();
      assert.equal(await page.getByRole('button').filter({ hasText: /^Apply/ }).count(), 0);
      await assertAccessible(page, 'Bulk settings, a viewer');
    });
  });

  it('sets the privacy label, refused in words when too long, and says why more than 100 books are not changed at once', async () => {
    await suite.signedIn('labels@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/bulk-settings?books=${ids.Atlas},${ids.Cargo}`, 'Bulk settings');
      await page.getByText('2 books chosen.').waitFor();
      await page.getByRole('row', { name: /Page-turn sound/ }).waitFor();

      // pdf_privacy_status takes at most 50 characters: the API's refusal is shown beside the field.
      await page.getByLabel('Privacy label', { exact: true }).selectOption({ label: 'Set to…' });
      await page.getByLabel('New privacy label').fill('x'.repeat(51));
      await page.getByRole('button', { name: 'Apply to 2 books' }).click();
      await page.getByRole('alert').filter({ hasText: 'The settings were not applied' }).waitFor();
      assert.equal(await page.getByLabel('New privacy label').getAttribute('aria-invalid'), 'true');
      await assertAccessible(page, 'Bulk settings, the privacy label refused');
      await page.getByLabel('New privacy label').fill('internal-only');
      await page.getByRole('button', { name: 'Apply to 2 books' }).click();
      await page.getByText('Done: all 2 books were changed.').waitFor();
      await page.getByRole('row', { name: /^Privacy label/ }).getByText('All: internal-only').waitFor();
      for (const id of [ids.Atlas!, ids.Cargo!]) {
        assert.equal((await suite.svc.request('GET', `/v1/books/${id}`, { key: suite.key })).body.data.settings.privacy, 'internal-only');
      }

      // 103 books: more than a batch takes. The screen says why, applies nothing, and offers the first 100.
      for (let n = 0; n < 100; n++) await insertBook(suite.svc, suite.workspaceId, { name: `Extra ${String(n).padStart(3, '0')}` });
      await page.reload();
      await heading(page, 'Bulk settings');
      await page.getByRole('radio', { name: 'All books (103)' }).check();
      await page.getByText(/^103 books chosen\. That is more than 100: one change reaches at most 100 books/).waitFor();
      await page.getByText('Shown for at most 100 books.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Apply to 103 books' }).isDisabled(), true);
      await assertAccessible(page, 'Bulk settings, more than 100 books');
      await page.getByRole('button', { name: 'Choose the first 100 of them' }).click();
      await page.getByText('100 books chosen.', { exact: true }).waitFor();
      assert.equal(await page.getByRole('radio', { name: 'Books I choose' }).isChecked(), true);
      await page.getByRole('row', { name: /Page-turn sound/ }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Apply to 100 books' }).isDisabled(), false);
      assert.deepEqual(tab.problems, []);
    });
  });
});
